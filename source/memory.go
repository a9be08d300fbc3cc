package source

import "io"

// memory is a Reader over rows held in memory: a plan test's given rows
// (migrate test), read as a CSV file's text cells.
type memory struct {
	file   string
	header *Header
	rows   [][]Cell
	next   int
}

// NewMemory reads rows, each with a cell per name, as a source called
// file: row i (from 1) is at file:i, so a plan test's row errors name the
// given row they come from (given:orders:2).
func NewMemory(file string, names []string, rows [][]Cell) Reader {
	return &memory{file: file, header: NewHeader(names), rows: rows}
}

func (m *memory) Header() *Header { return m.header }
func (m *memory) Close() error    { return nil }

func (m *memory) Next() (Row, error) {
	if m.next >= len(m.rows) {
		return Row{}, io.EOF
	}
	m.next++
	// A copy: the caller may keep the row, as it may of every reader.
	cells := append([]Cell(nil), m.rows[m.next-1]...)
	for len(cells) < len(m.header.Names) {
		cells = append(cells, "")
	}
	return Row{Loc: Location{File: m.file, Line: m.next}, Header: m.header, Cells: cells}, nil
}
