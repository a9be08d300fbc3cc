// Package read owns reading what a service holds: a collection page by
// page (Pages), so that a copy, an export or a lookup neither loses,
// repeats nor loops whatever the server does with $top, $skip, $filter or
// next links. Every command that reads a whole set reads it through here;
// what a row is worth is the caller's business.
package read
