package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/migrate-tool/migrate/internal/diag"
	"github.com/migrate-tool/migrate/report"
)

func (a *app) report(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("out", "", "FILE.xlsx or FILE.csv: the failed rows (default, when neither --html nor --created is given: the journal's name with .failed.xlsx)")
	html := fs.String("html", "", "FILE.html: the run report, one self-contained page to open in a browser, print or forward")
	created := fs.String("created", "", "FILE.xlsx or FILE.csv: every committed source row beside the keys the server assigned")
	var ev evidenceFlags
	ev.register(fs)
	pos, err := a.parse(fs, args, "JOURNAL", 1, 1)
	if err != nil {
		return err
	}
	if ev.file == "" && (ev.plan != "" || ev.dryRun != "" || ev.diff != "" || ev.conn.targetGiven) {
		return usageErr("--plan, --dry-run, --diff and --target go with --evidence FILE.zip")
	}
	if err := checkExt("--html", *html, ".html", ".htm"); err != nil {
		return err
	}
	if err := checkExt("--created", *created, ".xlsx", ".csv"); err != nil {
		return err
	}
	if err := checkExt("--out", *out, ".xlsx", ".csv"); err != nil {
		return err
	}
	if *html != "" {
		rep, err := report.RunReportOf(pos[0])
		if err != nil {
			return withCode(ExitUsage, err)
		}
		if err := report.WriteHTMLFile(*html, rep); err != nil {
			return withCode(ExitUsage, err)
		}
		fmt.Fprintf(a.stdout, "wrote %s: the run report, to open in a browser\n", *html)
	}
	if *created != "" {
		cs, err := report.CreatedKeys(pos[0], *created)
		if err = a.workbookWritten(err); err != nil {
			return withCode(ExitUsage, err)
		}
		fmt.Fprintf(a.stdout, "wrote %s: %s of %s, each beside the keys the server assigned\n", *created,
			diag.Count(cs.Rows, "source row", "source rows"), diag.Count(cs.Records, "committed record", "committed records"))
		if cs.NoRows > 0 {
			fmt.Fprintf(a.stdout, "%s have no source row in this journal (written by an older migrate): their lines give location and key only\n",
				diag.Count(cs.NoRows, "record", "records"))
		}
	}
	if ev.file != "" {
		if err := a.evidence(ctx, pos[0], ev); err != nil {
			return err
		}
	}
	if *out == "" && (*html != "" || *created != "" || ev.file != "") {
		return nil
	}
	file := *out
	if file == "" {
		file = strings.TrimSuffix(pos[0], filepath.Ext(pos[0])) + ".failed.xlsx"
	}
	n, waived, err := report.Report(pos[0], file)
	if err = a.workbookWritten(err); err != nil {
		return withCode(ExitUsage, err)
	}
	switch {
	case n == 0:
		fmt.Fprintf(a.stdout, "no failed rows; wrote %s with the header only\n", file)
	case waived > 0:
		fmt.Fprintf(a.stdout, "wrote %s: %s, each with its step, location and the server's message, and %s of records waived, with the reason\n",
			file, diag.Count(n-waived, "failed row", "failed rows"), diag.Count(waived, "row", "rows"))
	default:
		fmt.Fprintf(a.stdout, "wrote %s: %s, each with its step, location and the server's message\n", file, diag.Count(n, "failed row", "failed rows"))
	}
	return nil
}

// checkExt refuses a file whose name does not end in one of exts: the
// format follows the name.
func checkExt(flagName, file string, exts ...string) error {
	if file == "" {
		return nil
	}
	ext := strings.ToLower(filepath.Ext(file))
	for _, e := range exts {
		if ext == e {
			return nil
		}
	}
	return usageErr("%s %s: the file is written as %s", flagName, file, strings.Join(exts, " or "))
}
