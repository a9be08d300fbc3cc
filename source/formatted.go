package source

import "sort"

// Formatted is a workbook column whose number cells a number format shows
// otherwise than their stored digits ("#,##0.00" shows 1234.5 as
// "1,234.50", "0%" shows 0.5 as "50%"). The reader gives such a cell its
// stored digits, as a Number: right for a number field, but a text field
// written from it gets "1234.5", not what the customer sees. (A format that
// spells a whole number out digit by digit, such as "0000000000" or
// "000-0000000", is read as the text the sheet shows instead.)
type Formatted struct {
	File, Sheet, Column string
	// Row and Col (1 is A) are the first such cell; Format its number
	// format's code, and Value its stored digits.
	Row, Col int
	Format   string
	Value    Number
	// Cells is how many cells of the column are so formatted.
	Cells int
}

// keepFormatted hands the workbook what the reader's rows found, when it
// is closed: a Files gives them all (Formatted).
func (r *xlsxReader) keepFormatted() {
	if r.s == nil || len(r.s.formatted) == 0 || r.header == nil {
		return
	}
	names := map[int]string{}
	for i, n := range r.header.Names {
		names[r.header.Column(i)] = n
	}
	r.wb.mu.Lock()
	defer r.wb.mu.Unlock()
	for col, note := range r.s.formatted {
		name, ok := names[col]
		if !ok {
			continue // a cell outside the header: the row's error says so
		}
		k := r.sheet + "\x00" + name
		// Two readers of one sheet (its header, a lookup, a step) find the
		// same cells: the one that read furthest counts them.
		if old, ok := r.wb.formatted[k]; ok && old.Cells >= note.cells {
			continue
		}
		if r.wb.formatted == nil {
			r.wb.formatted = map[string]Formatted{}
		}
		r.wb.formatted[k] = Formatted{File: r.name, Sheet: r.sheet, Column: name,
			Row: note.row, Col: col + 1, Format: note.code, Value: note.value, Cells: note.cells}
	}
}

// Formatted lists the formatted number columns of every workbook read
// through f (readers that were closed), by file, sheet and column.
func (f *Files) Formatted() []Formatted {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	books := make([]*workbook, 0, len(f.books))
	for _, wb := range f.books {
		books = append(books, wb)
	}
	f.mu.Unlock()
	var out []Formatted
	for _, wb := range books {
		wb.mu.Lock()
		for _, c := range wb.formatted {
			out = append(out, c)
		}
		wb.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Sheet != b.Sheet {
			return a.Sheet < b.Sheet
		}
		return a.Column < b.Column
	})
	return out
}
