// Package executor prepares a plan to run and runs it. Prepare (prepare.go)
// is the one entry: it takes the loaded plan and what the command line
// connected to (metadata, version, the plan's connections), checks the
// sources' headers, compiles the plan (package transform) and checks it
// against the metadata; the Prepared run it returns is what DryRun, Diff,
// Apply, CheckReferences, CheckMaps (values of a file map its mapping file
// does not confirm), MapValues (the values migrate mapping lists) and
// StepKeys (the before-image of an export, package export) run on.
//
// It turns records into $batch requests and sends them
// (docs/design.md, The executor): one sub-request per entity and per sub-form
// child, addressed $<id>/<nav> with dependsOn so that an error stays with
// the row that caused it; batches packed greedily up to the server's limit;
// steps in dependency order; bounded concurrency; a write-ahead journal
// (package journal) before and after every batch so that a resumed run
// reconciles what is in doubt (package reconcile, whose Reader the run's
// reads go through too) and sends nothing twice; upsert and update
// with before-images; status; and the dry run
// (DryRun), which is the same loop over a simulated service that answers the
// writes and passes the reads to the target. Diff is that dry run with
// every step reading, each record classified against what the target
// holds; CheckReferences checks exists: before anything is sent;
// TargetLookups reads the lookups that read the target; and StepKeys
// gives the keys of a step's records (what package export's before-image
// reads). RunTests (plantest.go) runs a plan's tests: it compiles the plan
// without opening a source file and builds a test's step from the rows
// the test gives, comparing with compare.Value.
//
// The engine never prints: progress goes through Hook. It parses no YAML
// and no spreadsheet: records come from transform, the wire format from
// odata. What reads its results (the reports, the pages, the evidence:
// package report; the exports: package export) and what reads a run back
// from its journal and the service (package verify; package undo, which
// settles work in doubt with Settle) is not imported here.
package executor
