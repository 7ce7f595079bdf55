package cosmoshttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/ttlstore/ttlstore"
	"github.com/ttlstore/ttlstore/internal/cosmosql"
)

// apiError is a refusal as Azure Cosmos DB words it: an HTTP status, the
// code its JSON body names, and a message that says what was wrong.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

// codes are the "code" members of Cosmos DB's error bodies, by status.
var codes = map[int]string{
	http.StatusBadRequest:            "BadRequest",
	http.StatusUnauthorized:          "Unauthorized",
	http.StatusForbidden:             "Forbidden",
	http.StatusNotFound:              "NotFound",
	http.StatusMethodNotAllowed:      "MethodNotAllowed",
	http.StatusConflict:              "Conflict",
	http.StatusPreconditionFailed:    "PreconditionFailed",
	http.StatusRequestEntityTooLarge: "RequestEntityTooLarge",
	http.StatusFailedDependency:      "FailedDependency",
	http.StatusInternalServerError:   "InternalServerError",
	http.StatusServiceUnavailable:    "ServiceUnavailable",
}

func errorf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, msg: fmt.Sprintf(format, args...)}
}

// statusOf maps an error of the library (or of a handler) to the status
// Cosmos DB answers for the same condition. Every condition a client can
// cause is a 4xx: the SDK retries 5xx answers for seconds.
func statusOf(err error) int {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae.status
	case errors.Is(err, ttlstore.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ttlstore.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ttlstore.ErrPreconditionFailed):
		return http.StatusPreconditionFailed
	case errors.Is(err, ttlstore.ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ttlstore.ErrInvalidDocument), errors.Is(err, ttlstore.ErrInvalidTTL),
		errors.Is(err, ttlstore.ErrInvalidPatch), errors.Is(err, ttlstore.ErrInvalidPartitionKey),
		errors.Is(err, ttlstore.ErrPartitionKeyRequired), errors.Is(err, ttlstore.ErrInvalidToken),
		errors.Is(err, cosmosql.ErrSyntax), errors.Is(err, cosmosql.ErrUnsupported),
		errors.Is(err, cosmosql.ErrParameter):
		return http.StatusBadRequest
	case errors.Is(err, ttlstore.ErrTokenGone):
		// Cosmos DB answers 410 Gone for a continuation it no longer
		// has; the SDK would retry that as a split, so the message says
		// to read again from the beginning.
		return http.StatusBadRequest
	case errors.Is(err, ttlstore.ErrFull):
		return http.StatusForbidden
	case errors.Is(err, ttlstore.ErrClosed):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeError answers err with its status and a Cosmos DB error body.
func writeError(w http.ResponseWriter, err error) {
	status := statusOf(err)
	body, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{codes[status], err.Error()})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("x-ms-request-charge", "0")
	w.WriteHeader(status)
	w.Write(body)
}
