// Package read owns reading what a service holds, so that every command
// reads it one way: a whole entity set page by page (Pages), so that a
// copy, an export or a lookup neither loses, repeats nor loops whatever the
// server does with $top, $skip, $filter or next links; records by key
// (Keys: or-chained keys, many GETs a $batch call, a key absent only when
// the filter provably applied); a 404 believed only once its form is warm
// (Warmth); a read whose answer was lost sent again (Via). What a row is
// worth, and whether it is the same as what was sent (package compare), is
// the caller's business.
package read
