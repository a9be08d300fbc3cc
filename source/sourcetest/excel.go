package sourcetest

import (
	"archive/zip"
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/migrate-tool/migrate/source"
)

// Workbook is a workbook as a spreadsheet program saves it, written part
// by part so a test knows every byte: a blank cell is not in the sheet XML
// at all, a row ends at its last value (shorter than the header when its
// last cells are blank), rows without values are left out, text goes to
// the shared strings, dates are serial numbers with a date format.
// excelize's writer stores explicit empty cells and hides what readers do
// with the absent ones.
type Workbook struct {
	Sheets []Sheet
}

// Sheet is one worksheet. Rows[i] is sheet row i+1; Rows[i][j] is the cell
// in column j (0 = A), one of:
//
//	nil or ""              no cell: what Excel writes for a blank cell
//	Blank{}                a formatted cell without a value: <c r="B2" s="1"/>
//	string                 text, in the shared strings
//	source.Number, int,    a number
//	float64
//	bool                   a boolean
//	time.Time              a date serial number (1900 system) formatted as a
//	                       date, or as a date and time when it has a time
//	Formula                a formula with its cached value
type Sheet struct {
	Name string
	Rows [][]any
}

// Blank is a cell that has a format but no value, as Excel keeps a cell
// whose value was deleted.
type Blank struct{}

// Formula is a formula cell: Excel stores the expression and the value it
// last calculated (text cached values get t="str").
type Formula struct {
	Expr   string
	Cached any // string, source.Number, int, float64 or bool
}

// Style indexes of the cellXfs the writer's styles part declares.
const (
	styleGeneral  = 0
	styleDate     = 1 // built-in format 14, the short date
	styleDateTime = 2 // built-in format 22, date and time
)

// WriteWorkbook writes wb to path as an .xlsx file.
func WriteWorkbook(path string, wb Workbook) error {
	parts, err := wb.Parts()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	z := zip.NewWriter(f)
	for _, p := range parts {
		// A fixed time keeps the file the same from run to run.
		w, err := z.CreateHeader(&zip.FileHeader{Name: p.Name, Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err == nil {
			_, err = w.Write([]byte(p.Body))
		}
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := z.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadPart returns the part name ("xl/worksheets/sheet1.xml") of the
// workbook at path, for a test to check what its XML holds.
func ReadPart(path, name string) ([]byte, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	f, err := z.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Part is one file of the workbook's zip.
type Part struct {
	Name, Body string
}

// Parts returns the workbook's parts in the order Excel writes them.
func (wb Workbook) Parts() ([]Part, error) {
	if len(wb.Sheets) == 0 {
		return nil, fmt.Errorf("a workbook needs a sheet")
	}
	sst := &sharedStrings{index: map[string]int{}}
	var sheets []Part
	var overrides, wbSheets, rels strings.Builder
	for i, sh := range wb.Sheets {
		body, err := sheetXML(sh, sst)
		if err != nil {
			return nil, fmt.Errorf("sheet %q: %w", sh.Name, err)
		}
		name := fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1)
		sheets = append(sheets, Part{name, body})
		fmt.Fprintf(&overrides, `<Override PartName="/%s" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`, name)
		fmt.Fprintf(&wbSheets, `<sheet name="%s" sheetId="%d" r:id="rId%d"/>`, escape(sh.Name, true), i+1, i+1)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet%d.xml"/>`, i+1, i+1)
	}
	n := len(wb.Sheets)
	fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>`, n+1)
	fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>`, n+2)

	parts := []Part{
		{"[Content_Types].xml", decl + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
			overrides.String() +
			`<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>` +
			`<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>` +
			`<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>` +
			`<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/></Types>`},
		{"_rels/.rels", decl + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/>` +
			`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
		{"xl/workbook.xml", decl + `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
			`<fileVersion appName="xl" lastEdited="7" lowestEdited="7" rupBuild="27328"/><workbookPr defaultThemeVersion="166925"/>` +
			`<bookViews><workbookView xWindow="0" yWindow="0" windowWidth="28800" windowHeight="12300"/></bookViews>` +
			`<sheets>` + wbSheets.String() + `</sheets><calcPr calcId="191029"/></workbook>`},
		{"xl/_rels/workbook.xml.rels", decl + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rels.String() + `</Relationships>`},
	}
	parts = append(parts, sheets...)
	parts = append(parts,
		Part{"xl/styles.xml", decl + `<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` +
			`<fonts count="1"><font><sz val="11"/><color theme="1"/><name val="Calibri"/><family val="2"/><scheme val="minor"/></font></fonts>` +
			`<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>` +
			`<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>` +
			`<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>` +
			`<cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>` +
			`<xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>` +
			`<xf numFmtId="22" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>` +
			`<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`},
		Part{"xl/sharedStrings.xml", sst.xml()},
		Part{"docProps/core.xml", decl + `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:creator>migrate tests</dc:creator></cp:coreProperties>`},
		Part{"docProps/app.xml", decl + `<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Application>Microsoft Excel</Application></Properties>`},
	)
	return parts, nil
}

const decl = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\r\n"

// sheetXML writes one worksheet: only the cells that hold something, each
// with its reference, each row with the span of its cells.
func sheetXML(sh Sheet, sst *sharedStrings) (string, error) {
	var rows strings.Builder
	minCol, maxCol, maxRow := -1, -1, 0
	for r, row := range sh.Rows {
		var cells strings.Builder
		first, last := -1, -1
		for c, v := range row {
			ref := source.ColumnName(c) + strconv.Itoa(r+1)
			s, err := cellXML(ref, v, sst)
			if err != nil {
				return "", fmt.Errorf("%s: %w", ref, err)
			}
			if s == "" {
				continue
			}
			cells.WriteString(s)
			if first < 0 {
				first = c
			}
			last = c
		}
		if first < 0 {
			continue // Excel leaves out a row without cells
		}
		fmt.Fprintf(&rows, `<row r="%d" spans="%d:%d" x14ac:dyDescent="0.25">%s</row>`, r+1, first+1, last+1, cells.String())
		if minCol < 0 || first < minCol {
			minCol = first
		}
		maxCol = max(maxCol, last)
		maxRow = r + 1
	}
	dim := "A1"
	if maxRow > 0 {
		dim = fmt.Sprintf("%s1:%s%d", source.ColumnName(minCol), source.ColumnName(maxCol), maxRow)
	}
	return decl + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" mc:Ignorable="x14ac" xmlns:x14ac="http://schemas.microsoft.com/office/spreadsheetml/2009/9/ac">` +
		`<dimension ref="` + dim + `"/><sheetViews><sheetView workbookViewId="0"/></sheetViews><sheetFormatPr defaultRowHeight="15" x14ac:dyDescent="0.25"/>` +
		`<sheetData>` + rows.String() + `</sheetData>` +
		`<pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>`, nil
}

// cellXML is the <c> element of one cell, "" for no cell.
func cellXML(ref string, v any, sst *sharedStrings) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		if x == "" {
			return "", nil
		}
		return fmt.Sprintf(`<c r="%s" t="s"><v>%d</v></c>`, ref, sst.add(x)), nil
	case Blank:
		return fmt.Sprintf(`<c r="%s" s="%d"/>`, ref, styleDate), nil
	case bool:
		return fmt.Sprintf(`<c r="%s" t="b"><v>%s</v></c>`, ref, boolDigit(x)), nil
	case time.Time:
		serial, style, err := dateSerial(x)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf(`<c r="%s" s="%d"><v>%s</v></c>`, ref, style, serial), nil
	case Formula:
		f := "<f>" + escape(x.Expr, false) + "</f>"
		switch c := x.Cached.(type) {
		case string:
			return fmt.Sprintf(`<c r="%s" t="str">%s<v>%s</v></c>`, ref, f, escape(c, false)), nil
		case bool:
			return fmt.Sprintf(`<c r="%s" t="b">%s<v>%s</v></c>`, ref, f, boolDigit(c)), nil
		}
		n, err := number(x.Cached)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf(`<c r="%s">%s<v>%s</v></c>`, ref, f, n), nil
	}
	n, err := number(v)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(`<c r="%s"><v>%s</v></c>`, ref, n), nil
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// number is a number as Excel stores it: the shortest digits that give
// the double back, an exponent as E+20.
func number(v any) (string, error) {
	switch x := v.(type) {
	case source.Number:
		return string(x), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("%v cannot be stored in a workbook", x)
		}
		return strings.ToUpper(strconv.FormatFloat(x, 'G', -1, 64)), nil
	}
	return "", fmt.Errorf("%T is not a cell value", v)
}

// dateSerial is t's serial number in the 1900 date system and its style.
// Days before 1 March 1900 are refused: Excel counts a 29 February 1900
// that did not exist.
func dateSerial(t time.Time) (string, int, error) {
	if t.Before(time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC)) {
		return "", 0, fmt.Errorf("%s: dates before March 1900 are not written", t.Format(time.DateOnly))
	}
	since := t.Unix() - time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).Unix()
	days, secs := since/86400, since%86400
	if secs == 0 {
		return strconv.FormatInt(days, 10), styleDate, nil
	}
	return strconv.FormatFloat(float64(days)+float64(secs)/86400, 'G', -1, 64), styleDateTime, nil
}

type sharedStrings struct {
	list  []string
	index map[string]int
	count int
}

func (s *sharedStrings) add(v string) int {
	s.count++
	if i, ok := s.index[v]; ok {
		return i
	}
	s.index[v] = len(s.list)
	s.list = append(s.list, v)
	return len(s.list) - 1
}

func (s *sharedStrings) xml() string {
	var b strings.Builder
	b.WriteString(decl)
	fmt.Fprintf(&b, `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="%d" uniqueCount="%d">`, s.count, len(s.list))
	for _, v := range s.list {
		if strings.TrimSpace(v) != v {
			b.WriteString(`<si><t xml:space="preserve">` + escape(v, false) + `</t></si>`)
		} else {
			b.WriteString(`<si><t>` + escape(v, false) + `</t></si>`)
		}
	}
	b.WriteString(`</sst>`)
	return b.String()
}

// escape writes text for XML as Excel does: the markup characters as
// entities, characters XML cannot carry as _xHHHH_, and an underscore that
// would read as such an escape as _x005F_.
func escape(s string, attr bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"' && attr:
			b.WriteString("&quot;")
		case r == '_' && isOOXMLEscape(s[i:]):
			b.WriteString("_x005F_")
		case r < 0x20 && r != '\t' && r != '\n' && (r != '\r' || attr) || r == 0xFFFE || r == 0xFFFF:
			fmt.Fprintf(&b, "_x%04X_", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isOOXMLEscape(s string) bool {
	if len(s) < 7 || s[1] != 'x' || s[6] != '_' {
		return false
	}
	_, err := strconv.ParseUint(s[2:6], 16, 16)
	return err == nil
}

// ParseWorkbook reads a workbook from text, the form scripts and fixtures
// write it in. "[Name]" starts a sheet; every line after it is one sheet
// row, from row 1, its cells separated by "|":
//
//	[Orders]
//	Order|Customer|Date|Qty|Note
//	SO-1|X5001|{date}2026-11-10|{n}3|Boxed
//	SO-1|X5001|{date}2026-11-10|{n}4
//
// A field with nothing in it is a blank cell, absent from the XML, and a
// line with fewer fields than the header is a row that ends early; an
// empty line is an empty row. A field is text unless it starts with
// {n} (a number as stored), {date} (2006-01-02 or 2006-01-02T15:04:05),
// {b} (true or false) or is {blank} (a formatted cell without a value).
// Lines before the first sheet starting with "#" are comments.
func ParseWorkbook(text string) (Workbook, error) {
	var wb Workbook
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		l := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			wb.Sheets = append(wb.Sheets, Sheet{Name: l[1 : len(l)-1]})
			continue
		}
		if len(wb.Sheets) == 0 {
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			return Workbook{}, fmt.Errorf("line %d: a sheet starts with [Name] before its rows", line)
		}
		sh := &wb.Sheets[len(wb.Sheets)-1]
		var row []any
		if l != "" {
			for _, f := range strings.Split(l, "|") {
				v, err := parseCell(f)
				if err != nil {
					return Workbook{}, fmt.Errorf("line %d: %w", line, err)
				}
				row = append(row, v)
			}
		}
		sh.Rows = append(sh.Rows, row)
	}
	if err := sc.Err(); err != nil {
		return Workbook{}, err
	}
	if len(wb.Sheets) == 0 {
		return Workbook{}, fmt.Errorf("no sheet: start one with [Name]")
	}
	return wb, nil
}

func parseCell(f string) (any, error) {
	switch {
	case f == "{blank}":
		return Blank{}, nil
	case strings.HasPrefix(f, "{n}"):
		n := strings.TrimPrefix(f, "{n}")
		if _, err := strconv.ParseFloat(n, 64); err != nil {
			return nil, fmt.Errorf("%q is not a number", n)
		}
		return source.Number(n), nil
	case strings.HasPrefix(f, "{date}"):
		d := strings.TrimPrefix(f, "{date}")
		for _, layout := range []string{time.DateOnly, "2006-01-02T15:04:05"} {
			if t, err := time.Parse(layout, d); err == nil {
				return t, nil
			}
		}
		return nil, fmt.Errorf("%q is not a date (2006-01-02 or 2006-01-02T15:04:05)", d)
	case strings.HasPrefix(f, "{b}"):
		b, err := strconv.ParseBool(strings.TrimPrefix(f, "{b}"))
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", f)
		}
		return b, nil
	}
	return f, nil
}
