// Package atomicfile is the one way the tool writes an output file: to a
// temporary file of a random name in the target's folder, created
// exclusively (so a symbolic link planted at a guessable name is never
// followed), synced, then renamed over the target. A reader sees the old
// file or the whole new one, never half of one; a failure leaves no
// temporary file behind.
//
// It also opens the files that must be opened in place (the journal's
// lock) without following a symbolic link where the system can refuse to
// (O_NOFOLLOW).
package atomicfile
