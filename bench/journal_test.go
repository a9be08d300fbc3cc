package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/journal"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/sandbox"
)

// writeJournal writes a finished run of subs sub-requests: batches of 100
// (20 orders of 1 entity and 4 lines), each an intent, an outcome and 20
// record entries, as the executor writes them.
func writeJournal(path string, subs int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	put := func(e journal.Entry) {
		l, _ := journal.EncodeLine(e)
		w.Write(l)
	}
	put(journal.Entry{Kind: journal.KindHeader, Header: &journal.Header{Plan: "bench", PlanHash: "x",
		Steps: []journal.Step{{Name: "orders", Entity: "ORDERS"}}}})
	rec := 0
	for b := 1; b*100 <= subs; b++ {
		ss := make([]journal.Sub, 0, 100)
		rs := make([]journal.SubResult, 0, 100)
		var recs []journal.Entry
		for i := 0; i < 20; i++ {
			rec++
			id := fmt.Sprintf("O%07d", rec)
			rid := fmt.Sprintf("r%d", i)
			ss = append(ss, journal.Sub{ID: rid, Step: "orders", Rec: id, Op: journal.OpCreate, Meth: "POST", URL: "ORDERS", Hash: "0123456789abcdef"})
			rs = append(rs, journal.SubResult{ID: rid, Status: 201, Key: "'" + id + "'"})
			for c := 0; c < 4; c++ {
				cid := fmt.Sprintf("%sc%d", rid, c)
				ss = append(ss, journal.Sub{ID: cid, Step: "orders", Rec: id, Path: fmt.Sprint(c), Op: journal.OpCreate, Meth: "POST",
					URL: "$" + rid + "/ORDERITEMS_SUBFORM", Nav: "ORDERITEMS_SUBFORM", Hash: "0123456789abcdef"})
				rs = append(rs, journal.SubResult{ID: cid, Status: 201, Key: fmt.Sprint(c + 1)})
			}
			recs = append(recs, journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{Step: "orders", ID: id, Status: journal.Committed}})
		}
		put(journal.Entry{Kind: journal.KindIntent, Batch: b, Subs: ss})
		put(journal.Entry{Kind: journal.KindOutcome, Batch: b, Results: rs})
		for _, e := range recs {
			put(e)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// BenchmarkReplay is resume's first step: journal.Open of a journal of
// 1,000,000 sub-requests (replay, plus the copy that becomes the live
// state). It reports wall and CPU seconds; and the lean state's load
// (LoadIndexed, what status reads) from the log alone, writing the index,
// then from the index.
func BenchmarkReplay(b *testing.B) {
	b.ReportAllocs()
	path := filepath.Join(b.TempDir(), "big.journal")
	if err := writeJournal(path, 1_000_000); err != nil {
		b.Fatal(err)
	}
	var load, open, cpuLoad, rebuild, indexed time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0, t0 := cpuTime(), time.Now()
		st, err := journal.Load(path)
		load += time.Since(t0)
		cpuLoad += cpuTime() - c0
		if err != nil || st.Counts("orders").Committed != 200_000 {
			b.Fatalf("%v %+v", err, st.Counts("orders"))
		}
		st = nil
		t0 = time.Now()
		j, _, err := journal.Open(path)
		open += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		j.Close()
		// The lean state: from the log (writing the index), then from it.
		os.Remove(journal.IndexPath(path))
		for k, d := range []*time.Duration{&rebuild, &indexed} {
			if _, err := os.Stat(journal.IndexPath(path)); (err == nil) != (k == 1) {
				b.Fatalf("LoadIndexed %d: index there: %v", k, err == nil)
			}
			t0 = time.Now()
			st, err := journal.LoadIndexed(path)
			*d += time.Since(t0)
			if err != nil || st.Counts("orders").Committed != 200_000 || len(st.Steps["orders"].IDs) != 0 {
				b.Fatalf("LoadIndexed %d: %v %+v", k, err, st.Counts("orders"))
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(rebuild.Seconds()/n, "lean-rebuild-s")
	b.ReportMetric(indexed.Seconds()/n, "lean-indexed-s")
	b.ReportMetric(load.Seconds()/n, "load-s")
	b.ReportMetric(cpuLoad.Seconds()/n, "load-cpu-s")
	b.ReportMetric(open.Seconds()/n, "open-s")
}

// BenchmarkJournalOverhead is the journal's share of apply's wall time at
// 10 ms latency: the same load of 2,000 customers with the journal on disk
// (every intent fsynced) and on tmpfs (/dev/shm, where fsync costs
// nothing), in seven pairs run back to back; it reports the median of the
// pairs' differences (a shared machine makes single runs swing by ±10%)
// and the fastest run of each kind. It also reports the time a separate
// journal takes to append and fsync, one after the other, an intent and
// an outcome per call: an upper bound, as apply overlaps them with the
// calls in flight and leaves outcomes to the next intent's fsync.
func BenchmarkJournalOverhead(b *testing.B) {
	b.ReportAllocs()
	dir := b.TempDir()
	path, _, err := writeNotes(dir, 2000)
	if err != nil {
		b.Fatal(err)
	}
	shm := "/dev/shm"
	if fi, err := os.Stat(shm); err != nil || !fi.IsDir() {
		b.Skip("no tmpfs at /dev/shm to compare with")
	}
	disk, mem := time.Duration(1<<62), time.Duration(1<<62)
	var appends time.Duration
	var shares []float64
	for i := 0; i < b.N; i++ {
		for round := 0; round < 7; round++ {
			tg := newTarget(b, sandbox.Options{Latency: 10 * time.Millisecond}, odata.Config{})
			sum, dd := applyRun(context.Background(), b, tg, path, filepath.Join(dir, fmt.Sprintf("disk-%d-%d.journal", i, round)), batched)
			disk = min(disk, dd)
			jd, err := os.MkdirTemp(shm, "bench-")
			if err != nil {
				b.Fatal(err)
			}
			tg = newTarget(b, sandbox.Options{Latency: 10 * time.Millisecond}, odata.Config{})
			_, dm := applyRun(context.Background(), b, tg, path, filepath.Join(jd, "run.journal"), batched)
			mem = min(mem, dm)
			os.RemoveAll(jd)
			shares = append(shares, (dd-dm).Seconds()/dd.Seconds())
			if round == 0 {
				appends += appendCost(b, filepath.Join(dir, fmt.Sprintf("cost-%d.journal", i)), sum.Requests)
			}
		}
	}
	sort.Float64s(shares)
	b.ReportMetric(disk.Seconds(), "disk-s")
	b.ReportMetric(mem.Seconds(), "tmpfs-s")
	b.ReportMetric(100*shares[len(shares)/2], "%-overhead-median")
	b.ReportMetric(100*(disk-mem).Seconds()/disk.Seconds(), "%-overhead-fastest")
	b.ReportMetric(100*appends.Seconds()/float64(b.N)/disk.Seconds(), "%-serial-append-bound")
}

// appendCost times what the journal writes for calls batches of 100:
// intent, then outcome with the record entries, each fsynced.
func appendCost(b *testing.B, path string, calls int) time.Duration {
	j, err := journal.Create(path, journal.Header{Plan: "cost", PlanHash: "x"})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	subs := make([]journal.Sub, 100)
	res := make([]journal.SubResult, 100)
	recs := make([]journal.Entry, 0, 30)
	for i := range subs {
		subs[i] = journal.Sub{ID: fmt.Sprint("r", i), Step: "customers", Rec: fmt.Sprintf("N%07d", i), Op: journal.OpCreate, Meth: "POST", URL: "CUSTOMERS", Hash: "0123456789abcdef"}
		res[i] = journal.SubResult{ID: subs[i].ID, Status: 201, Key: "'X'"}
	}
	for i := 0; i < 30; i++ {
		recs = append(recs, journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{Step: "customers", ID: fmt.Sprint(i), Status: journal.Committed}})
	}
	start := time.Now()
	for c := 0; c < calls; c++ {
		n := j.NextBatch()
		if err := j.Append(journal.Entry{Kind: journal.KindIntent, Batch: n, Subs: subs}); err != nil {
			b.Fatal(err)
		}
		if err := j.Append(append([]journal.Entry{{Kind: journal.KindOutcome, Batch: n, Results: res}}, recs...)...); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}
