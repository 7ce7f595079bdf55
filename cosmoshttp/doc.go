// Package cosmoshttp serves ttlstore collections over Azure Cosmos DB's
// NoSQL REST API: enough of it for the official SDKs (the Go SDK azcosmos
// v1.4 and v1.5 are tested against it) to create databases and containers,
// read and write items, patch them, run transactional batches, query, and
// read the change feed, with the exact time-to-live rules of Cosmos DB.
//
// It is meant for tests of code that talks to Cosmos DB through an SDK:
// mount a Server in httptest.NewServer (or NewTLSServer), point
// azcosmos.NewClientWithKey at its URL with EmulatorKey, and move
// Options.Clock to expire items to the second. The command
// cmd/ttlstore-cosmos serves it on a port, in memory or over a directory.
//
// # The model
//
// A Server holds databases; a database holds containers; each container is
// one ttlstore.Collection, whose PartitionKeyPath is the container's
// partitionKey.paths[0] and whose DefaultTTL is its defaultTtl. Items are
// the collection's documents: an id is unique within its partition key,
// _ts and _etag are the collection's, and _rid, _self and _attachments are
// added on the way out (and dropped on the way in, when a client sends back
// an item it read). An _etag travels quoted, as Cosmos DB's do: the etag
// header and the body's _etag are "<the document's ETag>".
//
// # Time to live
//
// Every rule of ttlstore holds, because every item operation is one of its
// calls: an expired item is not found from the second it expires, whether
// or not it was swept; a write to an expired id creates; If-Match on an
// expired item is 404 (not 412: there is no item to compare with); a
// container PUT that changes defaultTtl re-resolves every item atomically
// (Collection.SetDefaultTTL), and nothing that had expired comes back.
// Queries run over the live items only: unlike the service, whose COUNT
// may include items past their expiry that its background deletion has not
// reached, COUNT(1) here counts exactly the items a read would find.
//
// # Endpoints
//
//	GET    /                                   account properties (one region: the host the request reached)
//	POST   /dbs                                create a database; with x-ms-documentdb-query, query them
//	GET    /dbs                                list databases
//	GET    /dbs/{db}, DELETE /dbs/{db}
//	POST   /dbs/{db}/colls                     create a container (partitionKey, defaultTtl); or query them
//	GET    /dbs/{db}/colls                     list containers
//	GET, PUT, DELETE /dbs/{db}/colls/{c}       read, replace (defaultTtl), delete a container
//	GET    /dbs/{db}/colls/{c}/pkranges        one partition key range, "" to "FF"; 304 on If-None-Match
//	POST   /dbs/{db}/colls/{c}/docs            create; upsert (x-ms-documentdb-is-upsert); query
//	                                           (x-ms-documentdb-query); batch (x-ms-cosmos-is-batch-request)
//	GET    /dbs/{db}/colls/{c}/docs            list items; with A-IM, the change feed
//	GET, PUT, DELETE, PATCH /dbs/{db}/colls/{c}/docs/{id}
//
// Routing is on the escaped path, each segment unescaped on its own, so an
// id may hold any character the SDKs escape ('/' included, which Cosmos DB
// itself refuses in ids and this endpoint accepts in items). Requests honour
// x-ms-documentdb-partitionkey (a JSON array of one value; [{}] is
// PartitionKey.None; the Go SDK's Go-quoted strings are read too), If-Match
// (and If-None-Match on reads), Prefer: return=minimal, x-ms-max-item-count
// and x-ms-continuation. Answers carry etag, x-ms-request-charge (1),
// x-ms-activity-id and x-ms-session-token.
//
// Transactional batches are one ttlstore.ExecuteBatch: 200 with each
// operation's status when all succeed, 207 with the failing operation's
// status and 424 for every other when one fails, and nothing applied.
//
// Queries are parsed and run by the subset of the Cosmos DB query language
// that internal/cosmosql implements (SELECT *, VALUE, projections, WHERE
// with comparisons, AND/OR/NOT, IN, parameters, IS_DEFINED, STARTSWITH,
// ARRAY_CONTAINS and a few more functions, ORDER BY one path, TOP, OFFSET
// LIMIT, COUNT): a query outside it is refused with 400 and a message that
// names the construct, never answered wrongly. A query without a partition
// key runs over every partition, ORDER BY and aggregates included. Pages
// are cut from the results in order of partition key and id (or the ORDER
// BY); a continuation is the count of results before the next page.
//
// The change feed reads the container's ttlstore feed: "A-IM: Incremental
// Feed" (latest version, what azcosmos 1.5's ReadChangeFeed sends) and
// "A-IM: Full-Fidelity Feed" (all versions and deletes, with TTL deletes
// marked timeToLiveExpired). The etag of an answer is the continuation;
// nothing new is 304 Not Modified with the same etag.
//
// # Errors
//
// A refusal is a 4xx with Cosmos DB's JSON body {"code","message"}, the
// message saying what was wrong: 400 (bad body, id, partition key, query,
// patch, ttl), 401 (signature), 404, 405, 409, 412, 413 (a body over
// Options.MaxDocumentSize, refused before it is read whole), and 424 inside
// a failed batch. A refused request changes nothing. A 5xx means the disk
// failed (ttlstore.ErrIO) or the Server is closed: the SDKs retry those.
//
// # Security
//
// Every request must carry a master-key signature (HMAC-SHA256 over the
// verb, resource type, resource link and x-ms-date, compared in constant
// time) under Options.Key, or EmulatorKey by default; one without is
// answered 401. The date is not checked against the clock (see authorize):
// this is a test endpoint whose clock may be a mock. Database and container
// ids that Cosmos DB refuses ('/', '\\', '?', '#', control characters,
// over 255 characters) are refused, and on disk a database or container is
// a directory named by its _rid, never by its id, so no id can name a path
// outside Options.Dir.
//
// # Not served
//
// Hierarchical partition keys, stored procedures, triggers, user-defined
// functions, users and permissions, offers (throughput), conflicts,
// attachments, and resource-token or AAD authorization. Consistency levels
// and session tokens are accepted and ignored: one replica holds
// everything, so every read is strong.
package cosmoshttp
