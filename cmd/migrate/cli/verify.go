package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/migrate-tool/migrate/executor"
)

// verifyJSON is docs/cli.md's output of verify --json.
type verifyJSON struct {
	Target   string              `json:"target"`
	Steps    []verifyStepJSON    `json:"steps"`
	Findings []verifyFindingJSON `json:"findings"`
	Calls    int                 `json:"calls"`
}

type verifyStepJSON struct {
	Name        string `json:"name"`
	Entity      string `json:"entity"`
	Records     int    `json:"records"`
	Matched     int    `json:"matched"`
	Differ      int    `json:"differ"`
	NotVerified int    `json:"not_verified"`
	// NotVerifiable: read, but every field written is hidden from reads.
	NotVerifiable int                `json:"not_verifiable"`
	Totals        []controlTotalJSON `json:"totals"`
}

type controlTotalJSON struct {
	What   string `json:"what"`
	Source string `json:"source"`
	Target string `json:"target"`
}

type verifyFindingJSON struct {
	Step     string `json:"step"`
	Record   string `json:"record"`
	Location string `json:"location,omitempty"`
	URL      string `json:"url"`
	Field    string `json:"field,omitempty"`
	Problem  string `json:"problem"`
	Sent     string `json:"sent,omitempty"`
	Found    string `json:"found,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

func (a *app) verify(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, false)
	asJSON := fs.Bool("json", false, "print one JSON document on stdout")
	out := fs.String("out", "", "also write the findings and control totals to this workbook (.xlsx)")
	pos, err := a.parse(fs, args, "JOURNAL", 1, 1)
	if err != nil {
		return err
	}
	if *out != "" && !strings.EqualFold(filepath.Ext(*out), ".xlsx") {
		return usageErr("--out: verify writes its workbook as .xlsx")
	}
	v := a.verifyView(*asJSON)
	if err = a.journalTarget(pos[0], &cf); err != nil {
		return err
	}
	cn, err := a.connect(ctx, cf, nil)
	if err != nil {
		return err
	}
	defer cn.Close()
	md, _, err := cn.client.Metadata(ctx)
	if err != nil {
		return a.unreachable(cn, err)
	}
	res, err := executor.Verify(ctx, pos[0], cn.client, executor.VerifyOptions{Target: cf.target, Metadata: md})
	if err != nil {
		if jerr := journalErr(err); jerr != nil {
			return jerr
		}
		var te *executor.TargetError
		if errors.As(err, &te) {
			return withCode(ExitUsage, err)
		}
		return a.unreachable(cn, err)
	}
	if *out != "" {
		if err := a.workbookWritten(executor.WriteVerify(res, *out)); err != nil {
			return withCode(ExitUsage, err)
		}
	}
	if err := v.Verify(verifyDoc(res), *out); err != nil {
		return err
	}
	if res.Differences() > 0 || res.TotalsDiffer() {
		return silent(ExitData)
	}
	return nil
}

// verifyDoc is what verify found as docs/cli.md's document.
func verifyDoc(res *executor.VerifyResult) verifyJSON {
	v := verifyJSON{Target: res.Target, Steps: []verifyStepJSON{}, Findings: []verifyFindingJSON{}, Calls: res.Calls}
	for _, s := range res.Steps {
		sj := verifyStepJSON{Name: s.Name, Entity: s.Entity, Records: s.Records, Matched: s.Matched, Differ: s.Differ,
			NotVerified: s.NotVerified, NotVerifiable: s.NotVerifiable, Totals: []controlTotalJSON{}}
		for _, t := range s.Totals {
			sj.Totals = append(sj.Totals, controlTotalJSON(t))
		}
		v.Steps = append(v.Steps, sj)
	}
	for _, f := range res.Findings {
		v.Findings = append(v.Findings, verifyFindingJSON{Step: f.Step, Record: f.Record, Location: f.Location, URL: f.URL,
			Field: f.Field, Problem: f.Problem, Sent: f.Sent, Found: f.Found, Detail: f.Detail})
	}
	return v
}

// printVerify shows the counts per step, the control totals side by side,
// then each finding with its record and field.
func printVerify(w io.Writer, v verifyJSON) {
	fmt.Fprintf(w, "target: %s\n", v.Target)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "step\tentity\trecords\tmatched\tdiffer\tnot verifiable\tnot verified")
	for _, s := range v.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", s.Name, s.Entity, s.Records, s.Matched, s.Differ, s.NotVerifiable, s.NotVerified)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "step\tcontrol total\tsent\ttarget")
	for _, s := range v.Steps {
		for _, t := range s.Totals {
			target := t.Target
			if t.Source != t.Target {
				target += "  ≠"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, t.What, t.Source, target)
		}
	}
	tw.Flush()
	if len(v.Findings) > 0 {
		fmt.Fprintln(w)
	}
	for _, f := range v.Findings {
		fmt.Fprintln(w, findingLine(f))
	}
	differ := 0
	for _, s := range v.Steps {
		differ += s.Differ
	}
	verb := "differ"
	if differ == 1 {
		verb = "differs"
	}
	fmt.Fprintf(w, "\n%s %s; %s\n", plural(differ, "record", "records"), verb, plural(v.Calls, "call", "calls"))
}

// findingLine: "orders.csv:3 customers C1002: CUSTOMERS('C1002') PHONE
// differs: sent "+972-8-6000002", found "+972-8-7777777"".
func findingLine(f verifyFindingJSON) string {
	var b strings.Builder
	if f.Location != "" {
		b.WriteString(f.Location + " ")
	}
	fmt.Fprintf(&b, "%s %s: %s", f.Step, f.Record, f.URL)
	if f.Field != "" {
		b.WriteString(" " + f.Field)
	}
	b.WriteString(" " + f.Problem)
	switch f.Problem {
	case executor.VerifyDiffers:
		found := f.Found
		if found == "" {
			found = "empty"
		}
		fmt.Fprintf(&b, ": sent %s, found %s", f.Sent, found)
	case executor.VerifyNotReadable:
		b.WriteString(" (the service does not return it: field-level permissions?); not compared")
	}
	if f.Detail != "" {
		b.WriteString(": " + f.Detail)
	}
	return b.String()
}
