// Package patch applies Azure Cosmos DB partial document updates ("patch
// operations") to one JSON document. It knows nothing of collections,
// expiry or storage: [Apply] takes a document's bytes and a list of [Op]
// and returns the new document's bytes, all operations applied or none.
// [Parse] reads the operations from the JSON wire form the Cosmos SDKs send.
//
// # The model
//
// A path is a JSON Pointer (RFC 6901) beginning with '/': "/a/b/0" is
// element 0 of the array at member "b" of member "a"; "~1" stands for '/'
// and "~0" for '~' inside a member name; "-" after an array names the place
// after its last element. Where the parent is an object every segment is a
// member name, digits or not; where it is an array a segment must be an
// index ("0", or digits without a leading zero) or "-".
//
// Operations apply in order, each to the document the ones before it
// left. No operation creates intermediate objects: every segment of a path
// but the last must exist and be an object or an array (ErrPathNotFound
// otherwise). If any operation fails, Apply returns an *Error naming it
// and nothing is returned but the error: the caller's document is never
// touched.
//
// # The operations
//
// On a member of an object (name n), and on an element of an array (index
// i of an array of length l):
//
//	kind     object member n                     array index i
//	add      create n, or replace its value      insert before i, 0 ≤ i ≤ l; "-" appends
//	set      create n, or replace its value      replace, 0 ≤ i < l
//	replace  replace; n must exist               replace, 0 ≤ i < l
//	remove   remove; n must exist                remove, 0 ≤ i < l; later elements shift down
//	incr     add to the number; create n absent  add to the number, 0 ≤ i < l
//	move     from must exist; then as add at path
//
// An index outside the ranges above, "-" for anything but add and move,
// and a member that must exist and does not are ErrPathNotFound. incr on a
// value that is not a number (null included) is ErrNotNumber.
//
// incr is exact for integers: a number written without fraction or
// exponent that fits in an int64 is an int64, and the sum of two is an
// int64 or ErrOverflow, never rounded through a float64. When either side
// is not such an integer (1.5, 1e3, 1.0, or an integer beyond int64) the
// sum is a float64 (ErrOverflow when infinite), written as encoding/json
// writes floats: 1 + 0.5 is 1.5, and 1 + 1.0 is 2. An absent member is
// created with the increment as written.
//
// move takes the value at From out first and then adds it at Path, so an
// index in Path counts the array after the removal (RFC 6902). Path may
// not lie inside From (ErrInvalidPatch); a move onto itself changes nothing
// but still needs From to exist.
//
// "/id" and the system properties "/_ts", "/_etag", "/_rid", "/_self" and
// "/_attachments" cannot be patched, nor anything inside them; nor can the
// further paths the caller passes to Apply, nor anything inside them or
// containing them (replacing "/a" would change "/a/b"). Those are
// ErrProtectedPath, for a move's From as for its Path. "/ttl" is an
// ordinary member here; it is the caller's to re-read it.
//
// # Where Cosmos DB is silent
//
//   - Duplicate member names: a path names the last member of that name,
//     the one encoding/json and JavaScript read. An operation that writes or
//     removes that member removes the earlier ones too, so the result never
//     shows a stale duplicate; duplicates no operation touches are kept.
//   - Remove and Move take no Value and only Move takes a From: an
//     operation that carries one is malformed (ErrInvalidPatch), not
//     silently trimmed. JSON null is a value like any other for add, set
//     and replace.
//   - Set, replace, remove and incr on "-", or set on index l, are
//     ErrPathNotFound: only add (and move's target) reach past the end.
//   - A move whose target is an array index inserts there (add semantics,
//     as RFC 6902), and a move onto an object member replaces it.
//   - An empty list of operations is not an error here: the limits on how
//     many operations a patch may have (Cosmos: 1 to 10) are the caller's.
//
// # Output and cost
//
// The output keeps the document's bytes wherever no operation writes:
// member order (a replaced member stays in place, a created member goes at
// the end of its object), numbers as written, whitespace. What the
// operations write (values, new names, incr's results) is compact, so a
// compact document stays compact.
//
// Apply never decodes the document. Each operation walks its bytes to the
// place its path names, checking the structure of the objects and arrays
// it walks through and skipping every other value whole (walk.go), then
// copies the document once with the change spliced in. The document must be
// valid JSON, as every document a collection stores is: Apply does not
// validate what it only copies (see Apply).
//
// Because a path names the last member of a name, finding a member would
// mean scanning its whole object; a search of the object's bytes for the
// quoted name (and for any backslash, which an escaped key would need)
// usually proves that no later member has the name, so the walk stops at
// the member, and an absent name is known absent without a walk at all.
// A patch of one field of a 1 KB document thus costs a search of the
// document's bytes, a walk up to the field, and one copy: BenchmarkApply1KB
// measures it against an Upsert of the same document.
//
// # Concurrency
//
// Parse and Apply are pure functions: they read their arguments, never
// change them, and keep nothing between calls. Any number of goroutines
// may call them at once, on shared documents and operations too.
package patch
