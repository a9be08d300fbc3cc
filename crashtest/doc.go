// Package crashtest holds the reliability campaigns of the journal's
// exactly-once promise (docs/design.md, The journal): the `migrate` command,
// in its own processes (the test binary run as main runs it, cli.Run),
// loads a generated plan (customers, parts, orders with 0-5 lines, line
// texts, order texts and attachments) into a sandbox served by the test
// process, while the campaign
//
//   - kills the client with SIGKILL at seeded random moments, during apply,
//     during its resumes and during undo, and resumes until it finishes
//     (crash campaign, crash_test.go), from a fresh sandbox and from
//     where customers are: a company that already holds orders
//     like the load's own, entered by hand (company_test.go), two runs
//     started at once on one journal, and a journal on a small disk that
//     fills in the middle of apply (a tmpfs: root on Linux, else skipped),
//     and against a sandbox with every quirk of real servers on
//     (docs/servers.md), at 21.0 and at 25.1 (TestCrashUnderQuirks), with
//     a plan that writes an order's CDES and a line's PDES, which the
//     server fills from the customer and the part in their place, orders
//     in doubt before any answer showed it decided with migrate resolve
//     as a user would (TestCrashFilled), and
//     while the plan copies part families from a template
//     company (a second sandbox, seven rows a page) that gains and loses
//     families before and after the copy's position during the runs and
//     between them (TestCrashChangingSource, changing_test.go), during a
//     delta load (apply --delta after the sources changed, TestCrashDelta,
//     delta_test.go), and against a standard OData service that is not the
//     ERP's: the CAP test service (odata/captest), loaded by the quickstart
//     plan with --dialect odata, its orders deep-inserted and line by line,
//     among look-alikes made before the run (TestCrashCAP, cap_test.go;
//     skipped without `npm ci` in odata/captest/testdata/cap, failed under
//     CI=true), and the Windows build under Wine, with paths on a drive
//     letter, killed as TerminateProcess kills (TestCrashWine,
//     wine_test.go; run when MIGRATE_WINE=1, as CI's Wine step does);
//   - has the sandbox drop connections before and after the commit, answer
//     500s, storms of 429 with Retry-After and latency spikes past the
//     client's timeout, at several rates (fault campaign, fault_test.go);
//
// and then compares every entity set the load writes with the data
// computed from the generated rows, independently of the tool: every
// entity, line, text and attachment exactly once, nothing missing, nothing
// extra; what the company held before must be there untouched after apply
// and after undo. The package has no code of its own besides the tests; it
// is the executable form of the exactly-once promise: a run killed or
// faulted anywhere, resumed, writes each record once.
//
// Short by default (60 kills over 1,000 records; 24 kills among
// look-alikes, 12 with two runs at once, 6 on a full disk, 6 with fields
// the server fills and 12 under quirks at each of two versions, over 300
// records; 24 copying 300
// families from a changing template; 12 in delta loads over 300 records;
// 12 in each of two CAP subtests over 30 orders in batches of 5; each fault at two rates
// over 250 records: about 15 s and 18 s of CPU on two cores, more with
// other builds running); long on demand, with the
// figures appended as Markdown tables to -campaign.results:
//
//	go test ./crashtest -run Crash -crash.points=500 -crash.records=5000
//	go test ./crashtest -run 'Crash(LookAlikes|TwoRuns|FullDisk|Filled)' -crash.lookalikes=60 -crash.two-runs=60 -crash.full-disk=36 -crash.filled=36 -crash.kind-records=1000
//	go test ./crashtest -run CrashChangingSource -crash.changing-source=60 -crash.kind-records=1000
//	go test ./crashtest -run 'CrashUnderQuirks|FaultsUnderQuirks' -crash.quirks=60 -crash.kind-records=1000 -campaign.quirks
//	go test ./crashtest -run CrashCAP -crash.cap=60 -crash.cap-orders=300 -crash.cap-batch=10
//	MIGRATE_WINE=1 WINEPREFIX=... go test ./crashtest -run CrashWine -crash.wine=24 -crash.kind-records=1000
//	go test ./crashtest -run Fault -fault.records=3000 -fault.rates=0.02,0.1,0.3 -fault.storm-calls=0 -fault.storms=3s,10s
//	MIGRATE_CAMPAIGN=long go test -timeout 30m ./crashtest   # the long run of RESULTS.md
//
// The kill delays, the loads and the sandbox's faults are seeded
// (-crash.seed, -fault.seed); where exactly a kill lands still depends on
// the machine's speed, which is the point. The delays are drawn within how
// long a run takes at the time (calibrated by an uninterrupted run, then
// taken from each whole run that ends before its kill; the resumes of an
// undo or a delta within what is left of it), so that they land in a run rather than
// after its end, which would cost another round of the load. The latency spikes, and the
// storms of the long run (-fault.storm-calls=0), are real time on the
// server side: they are the faults under test. For the sandbox's other
// faults (dropped connections, 500s, 429s) and the short run's storm,
// counted in calls, the client's own pauses (backoff, Retry-After) pass
// at once, every attempt still made, as in cmd/migrate's scripts.
//
// A run of migrate still going after -crash.hang-after (3 minutes; the
// longest takes seconds) is hung: it gets SIGQUIT, and its test fails
// with its goroutines, a line each for the engine's own code last, well
// before go test's own timeout would stop the whole package with only the
// test process's. A resume that stops again with nothing for a user to
// decide, five times in a row without a kill, fails its test too, with
// what the run printed.
// RESULTS.md records the figures of a long run and the bugs found.
package crashtest
