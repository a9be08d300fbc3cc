package sourcetest

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"

	"github.com/xuri/excelize/v2"
)

// WriteCSV writes a comma-separated file with the header cols and rows
// data rows whose cells gen returns (row and col count from 0).
func WriteCSV(path string, rows int, cols []string, gen func(row, col int) string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	w := csv.NewWriter(bw)
	if err := w.Write(cols); err != nil {
		f.Close()
		return err
	}
	rec := make([]string, len(cols))
	for r := 0; r < rows; r++ {
		for c := range rec {
			rec[c] = gen(r, c)
		}
		if err := w.Write(rec); err != nil {
			f.Close()
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteXLSX writes a workbook whose first sheet, "Sheet1", has the header
// cols in row 1 and rows rows of text cells below.
func WriteXLSX(path string, rows int, cols []string, gen func(row, col int) string) error {
	return WriteXLSXValues(path, "Sheet1", rows, cols, func(r, c int) any { return gen(r, c) })
}

// WriteXLSXValues is WriteXLSX with typed cells: gen may return string,
// int, float64, bool, time.Time or nil (an empty cell), as excelize's
// StreamWriter.SetRow takes them; a time.Time gets a date format.
func WriteXLSXValues(path, sheet string, rows int, cols []string, gen func(row, col int) any) error {
	f := excelize.NewFile()
	defer f.Close()
	if sheet != "Sheet1" {
		if err := f.SetSheetName("Sheet1", sheet); err != nil {
			return err
		}
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	hdr := make([]any, len(cols))
	for i, c := range cols {
		hdr[i] = c
	}
	if err := sw.SetRow("A1", hdr); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	for r := 0; r < rows; r++ {
		for c := range vals {
			vals[c] = gen(r, c)
		}
		cell, err := excelize.CoordinatesToCellName(1, r+2)
		if err != nil {
			return err
		}
		if err := sw.SetRow(cell, vals); err != nil {
			return fmt.Errorf("row %d: %w", r+2, err)
		}
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	return f.SaveAs(path)
}
