package source

import (
	"bytes"
	"fmt"
	"io"
)

// MaxLineBytes is the longest physical line a CSV source may have. A
// spreadsheet export never comes near it; a file with no line ends at all
// (a binary, a wrong delimiter in a one-line dump) would otherwise be read
// into memory whole before the first row.
const MaxLineBytes = 16 << 20

// lineTooLong is the error of a line past MaxLineBytes.
type lineTooLong struct{ line int }

func (e *lineTooLong) Error() string {
	return fmt.Sprintf("line %d is longer than %d MiB: this does not look like a CSV file (is it a workbook or a binary, or does it have no line ends?)", e.line, MaxLineBytes>>20)
}

// lineGuard passes bytes through and fails once a line runs past max.
type lineGuard struct {
	r    io.Reader
	max  int
	run  int // bytes since the last '\n'
	line int // the current line, from 1
}

func newLineGuard(r io.Reader, max int) *lineGuard { return &lineGuard{r: r, max: max, line: 1} }

func (g *lineGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	b := p[:n]
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			g.run += len(b)
			break
		}
		if g.run+i > g.max {
			return 0, &lineTooLong{line: g.line}
		}
		g.run = 0
		g.line++
		b = b[i+1:]
	}
	if g.run > g.max {
		return 0, &lineTooLong{line: g.line}
	}
	return n, err
}
