package source

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
)

// The workbook's parts are read with archive/zip and encoding/xml because
// excelize's streaming Rows gives cell text only, without the cell's type
// and style that decide between text, number, date and boolean; and its
// per-cell look-ups load the whole worksheet into memory.

// workbook is what the reader needs from a workbook's parts.
type workbook struct {
	zr       *zip.Reader
	closer   io.Closer            // the file, when the workbook was opened by path
	files    map[string]*zip.File // by lower-case name
	sheets   []wbSheet
	date1904 bool
	dateXf   []bool         // by cell style (xf) index: its number format shows a date
	showXf   []numShow      // by cell style (xf) index: how its number format shows a number
	sst      *sharedStrings // nil: the workbook has none
	// shared: a Files keeps the workbook open for every reader of a run;
	// a reader's Close leaves it open.
	shared bool
	mu     sync.Mutex
	merges map[mergeKey][]merge // the merged ranges that cross a header row
	// formatted are the formatted number columns its readers found, by
	// sheet and column name (Files.Formatted).
	formatted map[string]Formatted
}

type wbSheet struct {
	Name   string `xml:"name,attr"`
	RID    string `xml:"id,attr"`
	target string
}

// maxPartBytes is the most a workbook part may inflate to. The largest
// sheet Excel can save (1,048,576 rows) stays under it; a zip bomb, a small
// entry that inflates to gigabytes, does not. archive/zip refuses to
// inflate an entry past the size its header declares, so checking the
// header bounds what is read.
var maxPartBytes uint64 = 2 << 30

func (w *workbook) open(name string) (io.ReadCloser, error) {
	f, ok := w.files[strings.ToLower(strings.TrimPrefix(name, "/"))]
	if !ok {
		return nil, fmt.Errorf("the workbook has no part %s", name)
	}
	if f.UncompressedSize64 > maxPartBytes {
		return nil, limitError{fmt.Sprintf("the workbook's part %s inflates to %d bytes, more than the limit of %d (a damaged file or a zip bomb): save it again from Excel, or split it", name, f.UncompressedSize64, maxPartBytes)}
	}
	return f.Open()
}

func (w *workbook) has(name string) bool {
	_, ok := w.files[strings.ToLower(strings.TrimPrefix(name, "/"))]
	return ok
}

func (w *workbook) decode(name string, v any) error {
	rc, err := w.open(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := xml.NewDecoder(rc).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

type relationships struct {
	Rels []struct {
		ID     string `xml:"Id,attr"`
		Type   string `xml:"Type,attr"`
		Target string `xml:"Target,attr"`
		Mode   string `xml:"TargetMode,attr"`
	} `xml:"Relationship"`
}

// relsOf reads the relationships of part and resolves their targets.
func (w *workbook) relsOf(part string) (map[string]string, map[string]string, error) {
	dir, file := path.Split(part)
	relPath := path.Join(dir, "_rels", file+".rels")
	byID, byType := map[string]string{}, map[string]string{}
	if !w.has(relPath) {
		return byID, byType, nil
	}
	var rels relationships
	if err := w.decode(relPath, &rels); err != nil {
		return nil, nil, err
	}
	for _, r := range rels.Rels {
		if strings.EqualFold(r.Mode, "External") {
			continue
		}
		t := r.Target
		if strings.HasPrefix(t, "/") {
			t = strings.TrimPrefix(t, "/")
		} else {
			t = path.Join(dir, t)
		}
		byID[r.ID] = t
		kind := r.Type[strings.LastIndexByte(r.Type, '/')+1:]
		if _, ok := byType[kind]; !ok {
			byType[kind] = t
		}
	}
	return byID, byType, nil
}

func openWorkbook(p string) (*workbook, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return nil, err
	}
	w, err := readWorkbook(&zr.Reader)
	if err != nil {
		zr.Close()
		return nil, err
	}
	w.closer = zr
	return w, nil
}

// readWorkbook reads the workbook-wide parts: sheets, date system, styles
// and shared strings.
func readWorkbook(zr *zip.Reader) (*workbook, error) {
	w := &workbook{zr: zr, files: make(map[string]*zip.File, len(zr.File))}
	if err := w.load(); err != nil {
		return nil, err
	}
	return w, nil
}

// close is a reader's: it closes the workbook unless a Files keeps it.
func (w *workbook) close() error {
	if w.shared {
		return nil
	}
	return w.closeFile()
}

func (w *workbook) closeFile() error {
	w.sst.close()
	if w.closer == nil {
		return nil
	}
	return w.closer.Close()
}

func (w *workbook) load() error {
	for _, f := range w.zr.File {
		w.files[strings.ToLower(f.Name)] = f
	}
	_, root, err := w.relsOf("")
	if err != nil {
		return err
	}
	wbPath, ok := root["officeDocument"]
	if !ok {
		wbPath = "xl/workbook.xml"
	}
	var wb struct {
		Pr struct {
			Date1904 string `xml:"date1904,attr"`
		} `xml:"workbookPr"`
		Sheets []wbSheet `xml:"sheets>sheet"`
	}
	if err := w.decode(wbPath, &wb); err != nil {
		return err
	}
	w.date1904 = wb.Pr.Date1904 == "1" || strings.EqualFold(wb.Pr.Date1904, "true")
	byID, byType, err := w.relsOf(wbPath)
	if err != nil {
		return err
	}
	for _, s := range wb.Sheets {
		s.target = byID[s.RID]
		w.sheets = append(w.sheets, s)
	}
	if p, ok := byType["styles"]; ok && w.has(p) {
		if err := w.loadStyles(p); err != nil {
			return err
		}
	}
	if p, ok := byType["sharedStrings"]; ok && w.has(p) {
		if err := w.loadSST(p); err != nil {
			return err
		}
	}
	return nil
}

func (w *workbook) loadStyles(p string) error {
	var st struct {
		NumFmts []struct {
			ID   int    `xml:"numFmtId,attr"`
			Code string `xml:"formatCode,attr"`
		} `xml:"numFmts>numFmt"`
		Xfs []struct {
			NumFmtID int `xml:"numFmtId,attr"`
		} `xml:"cellXfs>xf"`
	}
	if err := w.decode(p, &st); err != nil {
		return err
	}
	codes := make(map[int]string, len(st.NumFmts))
	for _, f := range st.NumFmts {
		codes[f.ID] = f.Code
	}
	w.dateXf = make([]bool, len(st.Xfs))
	w.showXf = make([]numShow, len(st.Xfs))
	for i, xf := range st.Xfs {
		w.dateXf[i] = isDateFormat(xf.NumFmtID, codes[xf.NumFmtID])
		if !w.dateXf[i] {
			w.showXf[i] = showOf(xf.NumFmtID, codes[xf.NumFmtID])
		}
	}
	return nil
}

// maxSharedStringBytes is the memory the shared strings may take, counted
// as they are stored (xlsx_sst.go): their text plus a 4-byte end offset
// each, as allocated. A small workbook can hold
// millions of empty <si/> (one took 3.6 GB to read). Excel's largest real
// tables stay far below it.
var maxSharedStringBytes int64 = 256 << 20

// limitError is a workbook refused for a size limit: its message says what
// to do, and no other advice is added to it.
type limitError struct{ msg string }

func (e limitError) Error() string { return e.msg }

// sstEntryOverhead is what one more string costs beyond its text: its end
// offset.
const sstEntryOverhead = 4

// loadSST opens the shared strings, which are read as cells need them
// (xlsx_sst.go). They are the one part held in memory: cells refer to them
// by index in any order.
func (w *workbook) loadSST(p string) error {
	rc, err := w.open(p)
	if err != nil {
		return err
	}
	w.sst = newSharedStrings(p, rc)
	return nil
}

// sheet is the sheet a source names (its sheet: key), or the first one
// when it names none; ok is false when the workbook has no such sheet.
func (w *workbook) sheet(name string) (sh wbSheet, ok bool) {
	if len(w.sheets) == 0 {
		return wbSheet{}, false
	}
	if name == "" {
		return w.sheets[0], true
	}
	for _, s := range w.sheets {
		if s.Name == name {
			return s, true
		}
	}
	return wbSheet{}, false
}

func (w *workbook) sheetNames() []string {
	names := make([]string, len(w.sheets))
	for i, s := range w.sheets {
		names[i] = s.Name
	}
	return names
}

var errNoSheets = errors.New("the workbook has no sheets")
