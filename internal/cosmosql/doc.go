// Package cosmosql parses and runs the subset of Azure Cosmos DB's NoSQL
// query language that tests of TTL-dependent code write. It knows nothing
// of HTTP or collections: [Parse] takes the query text and its parameters,
// [Query.Execute] takes the documents of one container (the caller has
// already left out expired ones) and returns the result rows as JSON.
// [ParseCondition] and [Query.Match] serve patch conditions
// ("FROM c WHERE ...").
//
// A parsed [Query] is immutable: Match and Execute may be called from any
// number of goroutines at once. Unless a query uses the document as a whole
// (c itself in an expression, c[...] with a computed name), Match and
// Execute decode only the top-level members it reads (c.x, c["x"], c.x.y),
// skipping the bytes of the others while still validating them; results and
// errors are the same as decoding every document in full.
//
// # Grammar
//
// Keywords and function names are case-insensitive; identifiers (the FROM
// alias, property names) are case-sensitive.
//
//	query     = SELECT [TOP count] selection FROM from [WHERE expr]
//	            [ORDER BY path [ASC|DESC]] [OFFSET count LIMIT count]
//	condition = FROM from [WHERE expr]                (ParseCondition)
//	selection = "*" | VALUE expr | item {"," item}
//	item      = expr [[AS] name]
//	from      = ident [[AS] alias]                    (the alias, else ident, names the document)
//	count     = integer literal | @param              (a non-negative integer)
//	expr      = or
//	or        = and {OR and}
//	and       = not {AND not}
//	not       = NOT not | cmp
//	cmp       = sum [op sum | [NOT] IN "(" expr {"," expr} ")" | [NOT] BETWEEN sum AND sum
//	            | [NOT] LIKE sum [ESCAPE string]]
//	op        = "=" | "!=" | "<>" | "<" | "<=" | ">" | ">="
//	sum       = product {("+" | "-" | "||") product}
//	product   = unary {("*" | "/" | "%") unary}
//	unary     = ("-" | "+") unary | postfix
//	postfix   = primary {"." name | "[" expr "]"}
//	primary   = number | string | @param | true | false | null | undefined
//	          | alias | function "(" [expr {"," expr}] ")" | "(" expr ")"
//	          | "[" [expr {"," expr}] "]" | "{" [key ":" expr {"," key ":" expr}] "}"
//
// Strings take single or double quotes and the JSON escapes plus \'.
// Numbers are decimal, with optional fraction and exponent. A parameter is
// replaced by its JSON value at parse time, never spliced in as text.
//
// Functions: IS_DEFINED, IS_NULL, IS_BOOL, IS_NUMBER, IS_STRING, IS_ARRAY,
// IS_OBJECT, IS_PRIMITIVE, STARTSWITH(s, prefix [, ignoreCase]),
// ENDSWITH(s, suffix [, ignoreCase]), CONTAINS(s, sub [, ignoreCase]),
// LOWER, UPPER, LENGTH (code points), ARRAY_LENGTH and
// ARRAY_CONTAINS(arr, v [, partial]) (partial: an object v matches an
// object element holding at least v's members). Aggregates: COUNT, SUM,
// MIN, MAX, AVG, each only as a whole SELECT item.
//
// # Semantics
//
// Values are JSON values plus undefined, the value of a missing property.
// As in Cosmos, and unlike SQL:
//
//   - An operator whose operands do not fit it gives undefined: comparing
//     values of different types (1 = "1", null = false), anything with
//     undefined, != < <= > >= on arrays or objects, arithmetic on
//     non-numbers, division by zero, || on non-strings, a function given an
//     argument of the wrong type.
//   - = compares arrays and objects deeply; != and the ordering operators
//     on two arrays or two objects give undefined (as the Cosmos
//     documentation states). Numbers compare as float64, strings by code
//     point, false < true.
//   - AND, OR and NOT are three-valued: false AND undefined = false, true OR
//     undefined = true, NOT undefined = undefined; a non-boolean operand
//     counts as undefined.
//   - x IN (...) is undefined when x is undefined, otherwise whether some
//     element equals x (same type, deep equality); NOT IN negates it.
//     x BETWEEN a AND b is x >= a AND x <= b.
//   - s LIKE p is undefined unless both are strings; in p, % matches any
//     run of characters, _ any one, [abc], [a-f] and [^...] one of (or not
//     of) a set, and the ESCAPE character makes the next one literal.
//     Matching is case-sensitive.
//   - WHERE keeps a document only when the condition is exactly true.
//
// Results: SELECT * returns each document byte for byte, as given; so does
// the bare alias (SELECT VALUE c, or SELECT c as the member "c"). Other
// values are re-encoded: numbers from documents keep their text, computed
// numbers are printed shortest, object members come out sorted by name, and
// HTML characters are not escaped. A projection SELECT a, b builds an
// object in item order; an item without AS is named after the last member
// of its property path (c.b.x → "x", c["p q"] → "p q", c → "c"), any other
// item "$1", "$2", ... counting only the unnamed ones. A member whose value
// is undefined is left out; SELECT VALUE of an undefined value yields no
// row. Two items with the same name are a syntax error.
//
// Order: without ORDER BY, rows follow the order of the documents. ORDER BY
// sorts stably by type rank, undefined < null < false < true < numbers <
// strings < arrays < objects, then by value within null, booleans, numbers
// and strings (arrays, and objects, are equal among themselves). Documents
// where the ORDER BY path is undefined are kept: first ascending, last
// descending.
//
// Windows: OFFSET/LIMIT and TOP count documents after WHERE and ORDER BY,
// before projection (so a document whose SELECT VALUE is undefined uses up
// its place). Without ORDER BY, Execute stops reading documents once the
// window is full.
//
// Aggregates make one row from every document passing WHERE; undefined
// values are skipped. COUNT counts the defined values (COUNT(1) counts
// documents); SUM and AVG are undefined when a defined value is not a
// number; MIN and MAX use the ORDER BY order over null, booleans, numbers
// and strings and are undefined when a value is an array or object; SUM of
// nothing is 0, AVG, MIN and MAX of nothing are undefined. SELECT COUNT(1)
// gives {"$1": n}; SELECT VALUE COUNT(1) gives n. The window then applies
// to that single row.
//
// # What is refused
//
// Valid Cosmos SQL outside the subset fails with an error wrapping
// [ErrUnsupported] whose message names the construct: JOIN, GROUP BY,
// DISTINCT, subqueries (EXISTS, ARRAY, a parenthesized SELECT, IN (SELECT
// ...), FROM (SELECT ...)), user-defined functions (udf.name), FROM ... IN, FROM on a path, ORDER BY on more than one property, ORDER BY on
// an expression that is not a property path, ORDER BY RANK, any function
// not listed above ("function ABS"), aggregates with ORDER BY, mixed with
// non-aggregate items, or inside an expression or WHERE, TOP together with
// OFFSET LIMIT, the ?? and ?: operators, bitwise operators, and SELECT
// without FROM. Nothing is silently ignored.
//
// Malformed text fails with [ErrSyntax], naming the byte offset and what was
// expected there; identifiers other than the FROM alias are syntax errors
// ("could not be resolved"), as are expressions nested more than 200 deep.
// Parameter problems fail with [ErrParameter].
package cosmosql
