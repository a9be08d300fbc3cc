// Package journal is the write-ahead log of a run (docs/design.md, The
// journal).
//
// A journal is an append-only file with one JSON entry per line, each
// prefixed by the CRC-32C of its JSON: "1a2b3c4d {...}\n". The executor
// appends and fsyncs an intent entry before a $batch is sent and an outcome
// entry after its response; Replay turns the file back into State: per step,
// per record id, its status, the key the server assigned, the outcome of
// every sub-request, before-images for undo and the source row of failed
// records for the report. For the run report, entries also say when they
// were written and what each batch's call cost (attempts, 429s, waits), and
// a committed record keeps its source rows with the keys they became;
// LoadReport reads those, Load (resume) steps over them.
//
// A journal's lines are hash-chained (chain.go): each line after the
// header begins with its number and the SHA-256 of the line before it, so
// that CheckChain finds a line changed, inserted, removed or moved after
// it was written. Journals written before the chain are read as before.
//
// A torn or corrupt last line (a crash mid-write) is ignored on replay and
// cut off on the next append; a write cut short by a full disk is cut back
// before anything else is appended, so torn bytes are never followed by a
// line (replay also reads journals written before that rule, where a whole
// line follows torn bytes); a corrupt line anywhere else is an error that
// names it. Open and Create lock the journal (lock.go) until Close: one
// writer at a time, across processes. The journal knows no HTTP: URLs and statuses are data to it. No
// secret is ever written: entries hold no headers and no bodies, only a hash
// of each body.
//
// Beside the journal, apply and status keep its index (index.go, lean.go):
// the settled records (committed or skipped, nothing in flight) sorted on
// disk, and the rest of the state in full, so that a lean State
// (OpenIndexed, LoadIndexed) holds in memory only what is not settled. The
// index is a cache of the log, checked against it and rebuilt from it.
//
// Lines are encoded and decoded with github.com/segmentio/encoding/json
// by the entry types' struct tags (the one list of a line's fields), with
// json.Marshal's bytes: journals written before, by encoding/json and by
// hand, read the same, and their hash chains go on (codec_test.go,
// compat_test.go).
package journal
