package report

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/migrate-tool/migrate/journal"
)

// An evidence file holds against itself as written; a member taken out,
// one slipped in, or a plan that is not the journal's is named.
func TestEvidenceCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan := []byte("name: p\n")
	sum := sha256.Sum256(plan)
	jpath := filepath.Join(dir, "p.journal")
	j, err := journal.Create(jpath, journal.Header{Plan: "p", PlanHash: hex.EncodeToString(sum[:]), Sources: map[string]string{"c.csv": "ab"},
		Steps: []journal.Step{{Name: "customers", Entity: "CUSTOMERS"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(journal.Entry{Kind: journal.KindRecord, Record: &journal.RecordEntry{Step: "customers", ID: "C1", Status: journal.Committed, Key: "'C1'",
		Keyed: []journal.KeyedRow{{Loc: "c.csv:2", Header: []string{"id"}, Cells: []string{"C1"}}}}}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	data, err := os.ReadFile(jpath)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewManifest(jpath, data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreatedKeys(jpath, filepath.Join(dir, "keys.csv")); err != nil {
		t.Fatal(err)
	}
	keys, _ := os.ReadFile(filepath.Join(dir, "keys.csv"))
	m.PlanFile, m.Made = "plan/p.yaml", time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	members := []EvidenceMember{{Name: "plan/p.yaml", Data: plan}, {Name: EvidenceJournal, Data: data}, {Name: EvidenceCreated, Data: keys}}
	check := func(name string, members []EvidenceMember, extra map[string]string, want ...string) {
		t.Helper()
		path := filepath.Join(dir, name+".zip")
		if err := WriteEvidence(path, m, members); err != nil {
			t.Fatal(err)
		}
		if len(extra) > 0 {
			rewrite(t, path, extra)
		}
		ev, err := ReadEvidence(path)
		if err != nil {
			t.Fatal(err)
		}
		work := t.TempDir()
		res, err := ev.Check(work)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range res.Problems {
			got = append(got, p.String())
		}
		if len(got) != len(want) {
			t.Fatalf("%s: problems\n%s\nwant %d", name, strings.Join(got, "\n"), len(want))
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Errorf("%s: problem %d: %s\nwant %s...", name, i, got[i], want[i])
			}
		}
		if res.Chain == nil || !res.Chain.Intact() || res.Created != 1 && name != "dropped" {
			t.Errorf("%s: chain %+v, %d created rows", name, res.Chain, res.Created)
		}
	}
	check("whole", members, nil)
	check("extra", members, map[string]string{"notes.txt": "added"}, "notes.txt: not listed in the manifest")
	check("dropped", members, map[string]string{EvidenceCreated: ""}, EvidenceCreated+": missing")
	m2 := *m
	other := []EvidenceMember{{Name: "plan/p.yaml", Data: []byte("name: q\n")}, members[1], members[2]}
	m = &m2
	check("other plan", other, nil, "plan/p.yaml: its SHA-256 is")
}

// rewrite adds the members of extra with their content to the zip at
// path, or drops those whose content is "".
func rewrite(t *testing.T, path string, extra map[string]string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var order []string
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = b
		order = append(order, f.Name)
	}
	zr.Close()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	put := func(name string, b []byte) {
		w, _ := zw.Create(name)
		w.Write(b)
	}
	for _, name := range order {
		if v, ok := extra[name]; ok && v == "" {
			continue
		}
		put(name, files[name])
	}
	for name, v := range extra {
		if _, ok := files[name]; !ok {
			put(name, []byte(v))
		}
	}
	zw.Close()
	out.Close()
}

// A journal written before the chain still makes evidence: the manifest
// says it is not chained, its hash pins it, and the evidence holds.
func TestEvidenceOfAnUnchainedJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plan := []byte("name: p\n")
	sum := sha256.Sum256(plan)
	var data []byte
	for _, e := range []journal.Entry{
		{Kind: journal.KindHeader, Header: &journal.Header{Plan: "p", PlanHash: hex.EncodeToString(sum[:])}},
		{Kind: journal.KindRun, Run: &journal.Run{}},
	} {
		l, err := journal.EncodeLine(e)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, l...)
	}
	m, err := NewManifest("old.journal", data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Journal.Chained || m.Journal.Lines != 2 || m.Journal.ChainHead == "" {
		t.Fatalf("%+v", m.Journal)
	}
	m.PlanFile = "plan/p.yaml"
	path := filepath.Join(dir, "ev.zip")
	if err := WriteEvidence(path, m, []EvidenceMember{{Name: "plan/p.yaml", Data: plan}, {Name: EvidenceJournal, Data: data}}); err != nil {
		t.Fatal(err)
	}
	ev, err := ReadEvidence(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ev.Check(t.TempDir())
	if err != nil || len(res.Problems) > 0 || res.Chain.Chained {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestEvidenceVerdict: the last line of verify-evidence tells a file that
// holds from a company that changed since, and counts each apart.
func TestEvidenceVerdict(t *testing.T) {
	t.Parallel()
	file := EvidenceProblem{Member: "run.journal", Line: 3, Problem: "changed"}
	target := EvidenceProblem{Member: "target", Problem: "PHONE differs"}
	for _, tc := range []struct {
		problems []EvidenceProblem
		want     string
	}{
		{nil, "the evidence holds"},
		{[]EvidenceProblem{target, target}, "the evidence file holds, but the target differs from it now: 2 problems of the target"},
		{[]EvidenceProblem{file}, "the evidence does not hold: 1 problem of the file"},
		{[]EvidenceProblem{target, file, target}, "the evidence does not hold: 1 problem of the file, 2 of the target"},
	} {
		if got := EvidenceVerdict(tc.problems); got != tc.want {
			t.Errorf("EvidenceVerdict(%v) = %q, want %q", tc.problems, got, tc.want)
		}
	}
}
