package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/cmd/migrate/cli"
)

// TestDryRunSmall checks the harness itself on 1,000 rows of each format:
// every record built, none refused, two sub-requests a record.
func TestDryRunSmall(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"csv", "xlsx"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			path, err := writeDataset(t.TempDir(), format, 1000)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := dryRun(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkSummary(sum, 1000); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkPlan is `migrate plan` over generated customer files: 10 mapped
// fields, 2 lookups. It reports rows/s and the CPU time per row; the
// file is generated outside the timer.
func BenchmarkPlan(b *testing.B) {
	for _, tc := range []struct {
		format string
		rows   int
	}{{"csv", 100_000}, {"xlsx", 100_000}, {"csv", 1_000_000}, {"xlsx", 1_000_000}} {
		b.Run(fmt.Sprintf("%s/%dk", tc.format, tc.rows/1000), func(b *testing.B) {
			if testing.Short() && tc.rows > 100_000 {
				b.Skip("-short: 1M rows skipped")
			}
			b.ReportAllocs()
			path, err := dataset(tc.format, tc.rows)
			if err != nil {
				b.Fatal(err)
			}
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c0 := cpuTime()
				sum, err := dryRun(context.Background(), path)
				cpu += cpuTime() - c0
				if err != nil {
					b.Fatal(err)
				}
				if err := checkSummary(sum, tc.rows); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(tc.rows)/sec, "rows/s")
			b.ReportMetric(float64(tc.rows)/(cpu.Seconds()/float64(b.N)), "rows/cpu-s")
			if tc.rows >= 1_000_000 {
				hwm, err := childPeak(path, tc.rows)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(hwm)/(1<<20), "peak-MB")
			}
		})
	}
}

// BenchmarkPlanMemory measures the dry run's peak resident memory (VmHWM)
// in a child process over 100k, 300k and 1M rows of each format: flat
// means the same figure whatever the size.
func BenchmarkPlanMemory(b *testing.B) {
	for _, format := range []string{"csv", "xlsx"} {
		for _, rows := range []int{100_000, 300_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/%dk", format, rows/1000), func(b *testing.B) {
				if testing.Short() && rows > 100_000 {
					b.Skip("-short: large files skipped")
				}
				path, err := dataset(format, rows)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				var peak int64
				for i := 0; i < b.N; i++ {
					hwm, err := childPeak(path, rows)
					if err != nil {
						b.Fatal(err)
					}
					peak = max(peak, hwm)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
			})
		}
	}
}

// childEnv names the plan a child process dry-runs (TestPlanChild).
const childEnv = "BENCH_PLAN_CHILD"

// TestPlanChild is the child of childPeak: it dry-runs the plan named by
// BENCH_PLAN_CHILD and prints "rows HWM-bytes". Without it, it is skipped.
func TestPlanChild(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("only run as the child of BenchmarkPlanMemory")
	}
	sum, err := dryRun(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	hwm, err := vmHWM()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("CHILD %d %d\n", sum.Steps[0].Records, hwm)
}

// childPeak runs the test binary again with only TestPlanChild, and returns
// its peak resident set.
func childPeak(path string, rows int) (int64, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestPlanChild$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("child: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		var n, hwm int64
		if _, err := fmt.Sscanf(l, "CHILD %d %d", &n, &hwm); err == nil {
			if n != int64(rows) {
				return 0, fmt.Errorf("child built %d records, want %d", n, rows)
			}
			return hwm, nil
		}
	}
	return 0, fmt.Errorf("child printed no figure:\n%s", out)
}

// vmHWM is this process's peak resident set in bytes (Linux).
func vmHWM() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// datasets caches generated files across benchmarks of one run (a
// 1M-row workbook takes minutes to write); TestMain removes them.
var datasets struct {
	sync.Mutex
	dir   string
	paths map[string]string
}

// dataset returns the plan over a generated file of rows rows.
func dataset(format string, rows int) (string, error) {
	datasets.Lock()
	defer datasets.Unlock()
	key := fmt.Sprintf("%s-%d", format, rows)
	if p, ok := datasets.paths[key]; ok {
		return p, nil
	}
	if datasets.dir == "" {
		d, err := os.MkdirTemp("", "migrate-bench-")
		if err != nil {
			return "", err
		}
		datasets.dir, datasets.paths = d, map[string]string{}
	}
	dir := filepath.Join(datasets.dir, key)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	p, err := writeDataset(dir, format, rows)
	if err != nil {
		return "", err
	}
	datasets.paths[key] = p
	return p, nil
}

func TestMain(m *testing.M) {
	// The figures are those of the command, which runs with its own GC
	// target (and so does the child that measures peak memory).
	cli.TuneGC()
	code := m.Run()
	if datasets.dir != "" {
		os.RemoveAll(datasets.dir)
	}
	os.Exit(code)
}

var _ = runtime.NumCPU
