// Package bench is the end-to-end benchmark suite: the dry run
// over generated CSV and XLSX files through the real
// plan → transform → executor.DryRun path, apply against the sandbox versus a
// one-request-per-record loader, operations per call, the sustained rate
// under a calls-per-minute limit, the sandbox's own throughput on loopback,
// the journal's share of apply's wall time and the replay of a large
// journal.
//
// Everything is a benchmark: plain `go test ./...` runs only the small
// correctness tests of the harness. The figures of BENCHMARKS.md come from
//
//	go test ./bench -run '^$' -bench . -benchtime 1x -timeout 30m
//
// Large files are generated inside the benchmarks, in b.TempDir(). Peak
// memory of the dry run is measured in a child process (the test binary
// run again with BENCH_PLAN_CHILD set) from VmHWM in /proc/self/status, so
// that generating the file does not count.
package bench
