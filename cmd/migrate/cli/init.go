package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/migrate-tool/migrate/executor"
	"github.com/migrate-tool/migrate/intake"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/plan"
)

// initPlan writes a starting plan that maps a source's columns onto an
// entity's fields by name, case and spacing forgiven.
func (a *app) initPlan(ctx context.Context, args []string) error {
	var cf connFlags
	fs := connFlagSet("init", &cf, true)
	entity := fs.String("entity", "", "the entity set to load (required)")
	src := fs.String("source", "", "the CSV or XLSX file (required)")
	mdFile := fs.String("metadata", "", "a saved $metadata file")
	out := fs.String("out", "", "write the plan here instead of stdout (refuses to overwrite)")
	delim := fs.String("delimiter", "", "CSV delimiter (default ,)")
	enc := fs.String("encoding", "", "CSV encoding (default utf-8)")
	sheet := fs.String("sheet", "", "XLSX sheet (default the first)")
	headerRow := fs.Int("header-row", 0, "XLSX: the row that holds the column names (default: the first with two names or more, so that a title row above the header is passed over)")
	lazy := fs.Bool("lazy-quotes", false, "CSV: take a quote inside an unquoted field as a character (מק\"ט, בע\"מ)")
	if _, err := a.parse(fs, args, "", 0, 0); err != nil {
		return err
	}
	if *headerRow < 0 {
		return usageErr("--header-row %d: give a row number, 1 or more", *headerRow)
	}
	workbook := executor.IsWorkbook(*src)
	if *headerRow > 1 && !workbook {
		return usageErr("--header-row is for workbooks: a CSV's header is always its first line")
	}
	if *lazy && workbook {
		return usageErr("--lazy-quotes is for CSV files")
	}
	if *src != "" {
		is, err := intake.Is(*src)
		if err != nil && *entity == "" {
			return withCode(ExitUsage, err)
		}
		// With --entity, a workbook that cannot be opened is said so by
		// the source's reader below, with what to do.
		if is {
			if *sheet != "" || *headerRow != 0 {
				return usageErr("%s is an intake workbook (migrate template): it says its sheets and header rows itself; drop --sheet and --header-row", *src)
			}
			return a.initIntake(ctx, cf, *mdFile, *src, *entity, *out)
		}
	}
	if *entity == "" || *src == "" {
		fs.Usage()
		return usageErr("init needs --entity NAME and --source FILE (an intake workbook written by migrate template needs no --entity)")
	}
	dialect, err := a.dialectOf(cf, nil)
	if err != nil {
		return err
	}
	md, err := a.metadataOf(ctx, cf, *mdFile)
	if err != nil {
		return err
	}
	set := md.EntitySet(*entity)
	if set == nil {
		return usageErr("%s", md.NoEntity(*entity))
	}
	// The source as the plan will read it: a delimiter of one character.
	ps := &plan.Source{File: *src, Encoding: *enc, Sheet: *sheet, HeaderRow: *headerRow, LazyQuotes: *lazy}
	if r := []rune(*delim); len(r) == 1 {
		ps.Delimiter = *delim
	}
	header, err := headerOf(ps, *headerRow == 0 && workbook)
	if err == nil && ps.HeaderRow > 1 && *headerRow == 0 {
		fmt.Fprintf(a.stderr, "the column names are on row %d (the rows above hold a title): the plan says header_row: %d\n", ps.HeaderRow, ps.HeaderRow)
	}
	if err != nil {
		return withCode(ExitUsage, err)
	}

	planDir := "."
	if *out != "" {
		planDir = filepath.Dir(*out)
	}
	rel, err := filepath.Rel(planDir, *src)
	if err != nil {
		rel = *src
	}
	text := initDraft(set.Type, *entity, filepath.ToSlash(rel), ps, header, dialect).Marshal()
	if *out == "" {
		_, err := a.stdout.Write(text)
		return err
	}
	// Its first test goes beside it: refused before anything is written,
	// as the plan itself is, when that file exists.
	if _, err := os.Lstat(plan.TestsFile(*out)); err == nil {
		return usageErr("%s exists; init writes the plan's first test there", plan.TestsFile(*out))
	}
	if err := writeNew(*out, text); err != nil {
		return err
	}
	tests, err := a.writeInitTests(ctx, *out, ps, md)
	if err != nil {
		fmt.Fprintf(a.stderr, "wrote %s; next: migrate validate %s\n", *out, *out)
		return err
	}
	fmt.Fprintf(a.stderr, "wrote %s and its first test, %s; next: migrate validate %s, then migrate test %s\n", *out, tests, *out, *out)
	return nil
}

// headerOf reads the column names of source ps. With find (a workbook
// whose header row was not given), the header is the first row with two
// names or more, so that a title exported above it is passed over; ps's
// HeaderRow is then set to that row, or left 0 when it is the first.
func headerOf(ps *plan.Source, find bool) ([]string, error) {
	if !find {
		return executor.Columns(ps)
	}
	var header []string
	var err error
	for row := 1; row <= maxTitleRows+1; row++ {
		ps.HeaderRow = row
		if header, err = executor.Columns(ps); err != nil || namesIn(header) >= 2 {
			break
		}
	}
	if err == nil && namesIn(header) < 2 {
		ps.HeaderRow = 1
		header, err = executor.Columns(ps)
	}
	if err != nil || ps.HeaderRow == 1 {
		ps.HeaderRow = 0
	}
	return header, err
}

// maxTitleRows is how many rows above a header init passes over as a title.
const maxTitleRows = 10

// namesIn counts the column names a header row holds.
func namesIn(header []string) int {
	n := 0
	for _, h := range header {
		if strings.TrimSpace(h) != "" {
			n++
		}
	}
	return n
}

// normName forgives case, spaces, underscores and punctuation.
func normName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// initDraft is the starting plan of entity (of type t) read from file (as
// the plan names it, relative to the plan) as src says: each column mapped
// onto the field of its name or description, notes where a person has to
// look.
func initDraft(t *odata.EntityType, entity, file string, src *plan.Source, header []string, dialect odata.Dialect) *plan.Draft {
	step := strings.ToLower(entity)
	srcName := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	srcName = strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			return r
		}
		return '_'
	}, srcName)
	d := &plan.Draft{Note: "A starting plan written by `migrate init`: check every mapping, then run\nmigrate validate on it.", Name: step}
	if dialect.Standard() {
		// The plan says what kind of service it loads (docs/other-services.md).
		d.Dialect = string(dialect)
	}
	ds := *src
	ds.Name, ds.File = srcName, file
	d.Sources = []*plan.Source{&ds}
	st := &plan.DraftStep{Name: step, Entity: entity, Source: srcName}
	d.Steps = []*plan.DraftStep{st}
	note := func(format string, args ...any) {
		st.Fields = append(st.Fields, plan.DraftField{Note: fmt.Sprintf(format, args...)})
	}
	byNorm := map[string]string{}
	for _, h := range header {
		byNorm[normName(h)] = h
	}
	mapped := map[string]bool{}
	var unmatched []string
	// A column is matched by the field's name, else by its description (the
	// label a user sees in the ERP, Hebrew ones too: "שם לקוח" is CUSTDES).
	columnOf := func(p *odata.Property) (string, bool) {
		if col, ok := byNorm[normName(p.Name)]; ok {
			return col, true
		}
		if p.Description == "" {
			return "", false
		}
		col, ok := byNorm[normName(p.Description)]
		return col, ok && !mapped[col]
	}
	for _, p := range t.Properties {
		col, ok := columnOf(p)
		if !ok {
			continue
		}
		if p.Computed {
			note("%s is assigned by the server (read-only); column %q is not loaded", p.Name, col)
			continue
		}
		if p.ReadOnly {
			note("%s is read-only through the API (Core.Permissions Read); column %q is not loaded", p.Name, col)
			continue
		}
		mapped[col] = true
		st.Fields = append(st.Fields, plan.DraftField{Name: p.Name, Expr: rowExpr(col)})
	}
	for _, p := range t.Properties {
		if p.Mandatory && p.Writable() {
			if col, ok := columnOf(p); !ok && !mapped[col] {
				note("TODO %s is mandatory (%s): map it, e.g. %s: row[\"...\"]", p.Name, p.Type, p.Name)
			}
		}
	}
	for _, h := range header {
		if !mapped[h] {
			unmatched = append(unmatched, h)
		}
	}
	if len(unmatched) > 0 {
		note("columns with no field of the same name or description: %s", strings.Join(quoteAll(unmatched), ", "))
	}
	return d
}

// rowExpr is the expression that reads column col: row.X where X is a
// name, else row["X"].
func rowExpr(col string) string {
	simple := col != ""
	for i, r := range col {
		if !(unicode.IsLetter(r) || r == '_' || i > 0 && unicode.IsDigit(r)) || r > unicode.MaxASCII {
			simple = false
		}
	}
	if simple {
		return "row." + col
	}
	return "row[" + strconv.Quote(col) + "]"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// writeNew writes a file init makes, refusing to overwrite one.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return withCode(ExitUsage, err)
	}
	return withCode(ExitUsage, f.Close())
}
