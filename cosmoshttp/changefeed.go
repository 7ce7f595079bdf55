package cosmoshttp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ttlstore/ttlstore"
)

// The change feed: GET .../docs with A-IM, read from the container's
// ttlstore feed.
//
// "A-IM: Incremental Feed" is the latest-version mode (creates and
// replaces; each item once, at its latest change, and not at all once
// deleted or expired); "A-IM: Full-Fidelity Feed" is
// all versions and deletes, each change wrapped as Cosmos DB's wire format
// 2021-09-15 has it: {"current", "previous", "metadata": {"operationType",
// "lsn", "crts", "previousImageLSN", "timeToLiveExpired", "id",
// "partitionKey"}}. TTL deletes carry timeToLiveExpired: true.
//
// The continuation is the response's etag: the ttlstore feed token,
// quoted; the request sends it back as If-None-Match. Without it the read
// starts at the beginning of what the feed keeps; If-None-Match: * starts
// now; If-Modified-Since starts at that time. An answer with no change is
// 304 Not Modified with the etag to read on from.

func (s *Server) changeFeed(w http.ResponseWriter, r *http.Request, ct *container) error {
	req := ttlstore.FeedRequest{MaxChanges: defaultPage}
	aim := strings.ToLower(r.Header.Get("A-IM"))
	switch {
	case aim == "incremental feed":
	case strings.Contains(aim, "full-fidelity") || strings.Contains(aim, "allversionsanddeletes"):
		req.Mode = ttlstore.AllVersionsAndDeletes
		req.Previous = true
	default:
		return errorf(http.StatusBadRequest, "A-IM %q is not a change feed mode (Incremental Feed, or Full-Fidelity Feed for all versions and deletes)", r.Header.Get("A-IM"))
	}
	if m := r.Header.Get("x-ms-max-item-count"); m != "" {
		if n, err := strconv.Atoi(m); err == nil && n > 0 {
			req.MaxChanges = n
		}
	}
	switch inm := r.Header.Get("If-None-Match"); {
	case inm == "*":
		req.Start = ttlstore.FeedFromNow
	case inm != "":
		req.Token = unquote(inm)
	case r.Header.Get("If-Modified-Since") != "":
		// The Go SDK writes time.RFC1123 in UTC ("... 15:04:05 UTC"),
		// which http.ParseTime does not take.
		v := r.Header.Get("If-Modified-Since")
		t, err := http.ParseTime(v)
		if err != nil {
			t, err = time.Parse(time.RFC1123, v)
		}
		if err != nil {
			return errorf(http.StatusBadRequest, "If-Modified-Since %q is not an HTTP date", r.Header.Get("If-Modified-Since"))
		}
		req.Start, req.StartTime = ttlstore.FeedFromTime, t
	}
	pk, scoped, err := parsePK(r.Header.Get(hdrPK))
	if err != nil {
		return err
	}
	var out [][]byte
	token := ""
	for {
		page, err := ct.c.ReadFeed(req)
		if err != nil {
			return err
		}
		for _, ch := range page.Changes {
			if scoped && ch.PartitionKey != pk {
				continue
			}
			out = append(out, ct.changeJSON(ch, req.Mode))
		}
		token = page.Token
		// A page whose changes were all of other partitions is read past,
		// so that a partition's reader is not handed empty pages.
		if len(out) > 0 || len(page.Changes) == 0 {
			break
		}
		req.Token, req.Start = page.Token, 0
	}
	w.Header().Set("etag", quote(token))
	w.Header().Set("x-ms-item-count", strconv.Itoa(len(out)))
	if len(out) == 0 {
		writeJSON(w, http.StatusNotModified, nil)
		return nil
	}
	return writeList(w, "Documents", ct.ridStr, out)
}

// changeJSON returns one change as the feed's mode has it.
func (ct *container) changeJSON(ch ttlstore.Change, mode ttlstore.FeedMode) []byte {
	if mode == ttlstore.LatestVersion {
		b := ct.docJSON(nil, ch.Document)
		return append(append(b[:len(b)-1], `,"_lsn":`+strconv.FormatUint(ch.LSN, 10)...), '}')
	}
	op := "replace"
	switch ch.Op {
	case ttlstore.OpCreate, ttlstore.OpLoaded:
		op = "create"
	case ttlstore.OpDelete, ttlstore.OpEvicted:
		op = "delete"
	}
	meta := map[string]any{
		"operationType": op, "lsn": ch.LSN, "crts": ch.Time.Unix(),
		"timeToLiveExpired": ch.TimeToLiveExpired,
	}
	if ch.PreviousETag != "" {
		meta["previousImageETag"] = quote(ch.PreviousETag)
	}
	if op == "delete" {
		meta["id"] = ch.ID
		if ct.pkPath != "" {
			meta["partitionKey"] = map[string]json.RawMessage{ct.pkPath: pkJSON(ch.PartitionKey)}
		}
	}
	m := map[string]any{"metadata": meta}
	if ch.Document.ID() != "" || op != "delete" {
		m["current"] = json.RawMessage(ct.docJSON(nil, ch.Document))
	}
	if ch.Previous.ID() != "" {
		m["previous"] = json.RawMessage(ct.docJSON(nil, ch.Previous))
	}
	b, _ := json.Marshal(m)
	return b
}

// pkJSON returns a partition key's value as JSON; none is {}.
func pkJSON(pk ttlstore.PartitionKey) json.RawMessage {
	if pk == ttlstore.PartitionKeyNone() {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(pk.String())
}
