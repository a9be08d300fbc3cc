// Package report reads what a run leaves (its journal, a dry run's or a
// diff's result) and renders it for a person: the failed rows' file
// (Report: the source's own rows with the server's message beside each,
// ready to correct and load again) and the created keys (CreatedKeys), as
// .xlsx or .csv; the run report's HTML page (RunReportOf, DryRunReport:
// its figures, the calls' chart, totals, undo), one self-contained file;
// the diff's page and workbook (DiffReportOf, WriteDiff); verify's
// workbook (WriteVerify); the mapping file of migrate mapping
// (WriteMapping); the pages plan and diff keep beside a journal
// (pages.go) and the evidence file made of them and the journal
// (evidence.go).
//
// It sends nothing and writes no journal; the engine (package executor)
// never imports it. Every workbook and CSV goes through package
// internal/workbook, every file it writes for a person through
// internal/atomicfile.
package report
