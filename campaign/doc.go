// Package campaign holds the reliability campaigns of the journal's
// exactly-once promise (DESIGN.md "The journal"): the real `migrate` binary
// loads a generated plan (customers, parts, orders with 0-5 lines, line
// texts, order texts and attachments) into a sandbox served by the test
// process, while the campaign
//
//   - kills the client with SIGKILL at seeded random moments, during apply,
//     during its resumes and during undo, and resumes until it finishes
//     (crash campaign, crash_test.go);
//   - has the sandbox drop connections before and after the commit, answer
//     500s, storms of 429 with Retry-After and latency spikes past the
//     client's timeout, at several rates (fault campaign, fault_test.go);
//
// and then compares every entity set the load writes with the data
// computed from the generated rows, independently of the tool: every
// entity, line, text and attachment exactly once, nothing missing, nothing
// extra. The package has no code of its own besides the tests; it is the
// executable form of issue 8, parts 1 and 2.
//
// Short by default (60 kills over 1,000 records, each fault at two rates
// over 250 records: about 30-50 s on two cores); long on demand, with the
// figures appended as Markdown tables to -campaign.results:
//
//	go test ./campaign -run Crash -crash.points=500 -crash.records=5000
//	go test ./campaign -run Fault -fault.records=3000 -fault.rates=0.02,0.1,0.3 -fault.storms=3s,10s
//	MIGRATE_CAMPAIGN=long go test -timeout 30m ./campaign   # the long run of RESULTS.md
//
// The kill delays, the loads and the sandbox's faults are seeded
// (-crash.seed, -fault.seed); where exactly a kill lands still depends on
// the machine's speed, which is the point. The latency spikes and storms
// are real time on the server side: they are the faults under test.
// RESULTS.md records the figures of a long run and the bugs found.
package campaign
