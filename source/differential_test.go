package source

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestXLSXAgainstExcelize writes random typed cells with excelize and
// checks this reader sees what excelize's own GetRows sees: the same text,
// and numbers of the same value (excelize gives them raw).
func TestXLSXAgainstExcelize(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	texts := []string{"plain", " padded ", "שלום עולם", "a\nb", "x_x000D_y", "<&>\"'", "=not a formula", "0012", "1E5", "TRUE"}
	value := func() any {
		switch rng.IntN(7) {
		case 0:
			return texts[rng.IntN(len(texts))]
		case 1:
			return rng.IntN(2_000_000) - 1_000_000
		case 2:
			return math.Round(rng.NormFloat64()*1e6) / 1e3
		case 3:
			return rng.Float64() * math.Pow(10, float64(rng.IntN(40)-20))
		case 4:
			return rng.IntN(2) == 0
		case 5:
			return nil
		}
		return fmt.Sprintf("t%d", rng.IntN(100))
	}
	const rows, cols = 300, 6
	f := excelize.NewFile()
	defer f.Close()
	for c := 0; c < cols; c++ {
		cell, _ := excelize.CoordinatesToCellName(c+1, 1)
		f.SetCellValue("Sheet1", cell, fmt.Sprintf("C%d", c))
	}
	for r := 2; r <= rows+1; r++ {
		for c := 1; c <= cols; c++ {
			v := value()
			if v == nil {
				continue
			}
			cell, _ := excelize.CoordinatesToCellName(c, r)
			if err := f.SetCellValue("Sheet1", cell, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := filepath.Join(t.TempDir(), "diff.xlsx")
	if err := f.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	g, err := excelize.OpenFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	want, err := g.GetRows("Sheet1", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(Options{Name: "diff.xlsx", Path: p})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := 0
	for i, wrow := range want[1:] {
		empty := true
		for _, s := range wrow {
			if strings.TrimSpace(s) != "" {
				empty = false
			}
		}
		if empty {
			continue
		}
		row, err := r.Next()
		if err != nil {
			t.Fatalf("row %d: %v", i+2, err)
		}
		if row.Loc.Line != i+2 {
			t.Fatalf("row at line %d, want %d", row.Loc.Line, i+2)
		}
		seen++
		for c := 0; c < cols; c++ {
			w := ""
			if c < len(wrow) {
				w = wrow[c]
			}
			got := row.Cells[c]
			ok := false
			switch v := got.(type) {
			case nil:
				ok = w == ""
			case string:
				ok = v == w
			case bool:
				ok = w == map[bool]string{true: "1", false: "0"}[v] || strings.EqualFold(w, fmt.Sprint(v))
			case Number:
				a, ok1 := new(big.Rat).SetString(string(v))
				b, ok2 := new(big.Rat).SetString(w)
				ok = ok1 && ok2 && a.Cmp(b) == 0
			}
			if !ok {
				t.Errorf("%s: got %#v, excelize has %q", row.Loc.Cell(c), got, w)
			}
		}
	}
	if seen < rows/2 {
		t.Fatalf("only %d rows compared", seen)
	}
	if _, err := r.Next(); err == nil {
		t.Error("more rows than excelize sees")
	}
}
