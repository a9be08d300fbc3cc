package main

// TestBadInput is the catalogue of bad input (at least 60 cases): plans,
// sources, values, journals and server answers that are wrong in every way we
// could think of, each run through the real binary.
//
// How it is organised: every file testdata/badinput/*.txtar is a testscript
// of one family (plans, sources, values, journals, server). The example
// plans are copied into $WORK/examples as for TestScripts. A case is one
// line
//
//	mig CODE ARGS...
//
// which runs `migrate ARGS...`, requires exit code CODE exactly (docs/cli.md),
// and requires that neither stdout nor stderr shows a panic ("panic:",
// "goroutine "). It writes what the user saw to got.stdout and got.stderr
// with the two things that change from run to run replaced (a listening
// port is 127.0.0.1:PORT, the time a run took is ELAPSED), and the case
// compares them exactly with its golden files (`cmp got.stderr
// want/NN-....stderr`, sqlc's stderr.txt per case): a changed message,
// a line more or a line less is seen. -update rewrites the golden files in
// the txtar. Each family file states in a comment above every case what is
// wrong.
//
// Binary or huge inputs are generated, not committed: `gen KIND FILE`
// writes XLSX variants, zips that are not workbooks, zip bombs, garbage
// and files in other encodings (see genInput). Bad server answers come
// from `badserver KIND [MATCH]`: an httptest server in this process that
// proxies to a fresh sandbox but answers KIND to every request whose path
// and query contain MATCH (all requests when MATCH is empty); it points
// MIGRATE_TARGET, MIGRATE_USER, MIGRATE_PASSWORD at itself. Journals are
// damaged in place with `damage KIND FILE`.
//
// The test counts the cases it ran and fails if there are fewer than 60.

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"github.com/migrate-tool/migrate/internal/golden"
	"github.com/migrate-tool/migrate/sandbox"
)

var badCases atomic.Int64

func TestBadInput(t *testing.T) {
	badCases.Store(0)
	t.Run("catalogue", func(t *testing.T) {
		testscript.Run(t, testscript.Params{
			Dir:           "testdata/badinput",
			UpdateScripts: golden.Updating(), // -update rewrites the files scripts compare against
			Setup:         setupWork,
			Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
				"mig":       cmdMig,
				"gen":       cmdGen,
				"badserver": cmdBadServer,
				"damage":    cmdDamage,
				"sandbox":   cmdSandbox,
			},
		})
	})
	if n := badCases.Load(); !t.Failed() && n < 60 {
		t.Errorf("the catalogue ran %d cases; the catalogue is to hold at least 60", n)
	} else {
		t.Logf("%d bad-input cases", n)
	}
}

// cmdMig: `mig CODE ARGS...` runs the binary and checks its exit code and
// that it did not panic.
func cmdMig(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: mig CODE ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	badCases.Add(1)
	err = ts.Exec("migrate", args[1:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		got = ee.ExitCode()
	default:
		ts.Fatalf("running migrate: %v", err)
	}
	out := ts.ReadFile("stdout") + ts.ReadFile("stderr")
	for _, bad := range []string{"panic:", "goroutine ", "runtime error"} {
		if strings.Contains(out, bad) {
			ts.Fatalf("migrate %s crashed (%q in its output)", strings.Join(args[1:], " "), bad)
		}
	}
	if got != want {
		ts.Fatalf("migrate %s: exit %d, want %d", strings.Join(args[1:], " "), got, want)
	}
	for _, name := range []string{"stdout", "stderr"} {
		ts.Check(os.WriteFile(ts.MkAbs("got."+name), []byte(steadyOutput(ts.ReadFile(name))), 0o644))
	}
}

var (
	listenPort = regexp.MustCompile(`127\.0\.0\.1:\d{2,5}\b`)
	elapsed    = regexp.MustCompile(`( sub-requests?) in (under a second|\d+s|\d+m\d\ds|\d+h\d\dm)\.`)
)

// steadyOutput replaces what differs between two runs of the same case:
// the port a test server listens on and the time apply took.
func steadyOutput(s string) string {
	s = listenPort.ReplaceAllString(s, "127.0.0.1:PORT")
	return elapsed.ReplaceAllString(s, "$1 in ELAPSED.")
}

// cmdGen: `gen KIND FILE [ARG]` writes a generated input.
func cmdGen(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: gen KIND FILE [ARG]")
	}
	arg := ""
	if len(args) > 2 {
		arg = args[2]
	}
	b, err := genInput(ts, args[0], arg)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}

// genInput builds the bytes of a generated input.
func genInput(ts *testscript.TestScript, kind, arg string) ([]byte, error) {
	switch kind {
	case "garbage": // ARG bytes of seeded random data
		n, _ := strconv.Atoi(arg)
		r := rand.New(rand.NewPCG(1, 2))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return b, nil
	case "zeros": // ARG bytes of zeros (a file over a size limit)
		n, _ := strconv.Atoi(arg)
		return make([]byte, n), nil
	case "windows-1255", "utf-16le", "latin1": // ARG is a file to re-encode
		text := ts.ReadFile(arg)
		var enc interface{ Bytes([]byte) ([]byte, error) }
		switch kind {
		case "windows-1255":
			enc = charmap.Windows1255.NewEncoder()
		case "latin1":
			enc = charmap.ISO8859_1.NewEncoder()
		default:
			enc = unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewEncoder()
		}
		return enc.Bytes([]byte(text))
	case "bytes": // ARG is Go-quoted text: "\xff\xfe..."
		s, err := strconv.Unquote(`"` + arg + `"`)
		return []byte(s), err
	case "xlsx": // ARG is a CSV file: one sheet "Sheet1" holding its cells as text
		rows := [][]string{}
		for _, line := range strings.Split(strings.TrimRight(ts.ReadFile(arg), "\n"), "\n") {
			rows = append(rows, strings.Split(line, ","))
		}
		return workbook(func(f *excelize.File) error {
			for r, row := range rows {
				for c, v := range row {
					cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
					if err := f.SetCellStr("Sheet1", cell, v); err != nil {
						return err
					}
				}
			}
			return nil
		})
	case "xlsx-formula-errors": // header Code,Name,Price; the prices are #DIV/0! and #N/A as Excel saves them
		b, err := workbook(func(f *excelize.File) error { return f.SetCellStr("Sheet1", "A1", "Code") })
		if err != nil {
			return nil, err
		}
		sheet := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>
<row r="1"><c r="A1" t="inlineStr"><is><t>Code</t></is></c><c r="B1" t="inlineStr"><is><t>Name</t></is></c><c r="C1" t="inlineStr"><is><t>Price</t></is></c></row>
<row r="2"><c r="A2" t="inlineStr"><is><t>P-1</t></is></c><c r="B2" t="inlineStr"><is><t>Widget</t></is></c><c r="C2" t="e"><f>1/0</f><v>#DIV/0!</v></c></row>
<row r="3"><c r="A3" t="inlineStr"><is><t>P-2</t></is></c><c r="B3" t="inlineStr"><is><t>Gadget</t></is></c><c r="C3" t="e"><f>NA()</f><v>#N/A</v></c></row>
</sheetData></worksheet>`
		return rezipWith(b, nil, nil, map[string]string{"xl/worksheets/sheet1.xml": sheet})
	case "xlsx-empty": // one sheet with nothing in it
		return workbook(func(f *excelize.File) error { return nil })
	case "xlsx-huge-dimension": // a header, and a cell at the last column of the last row
		return workbook(func(f *excelize.File) error {
			f.SetCellStr("Sheet1", "A1", "Code")
			f.SetCellStr("Sheet1", "B1", "Name")
			f.SetCellStr("Sheet1", "A2", "P-1")
			f.SetCellStr("Sheet1", "B2", "Widget")
			return f.SetCellStr("Sheet1", "XFD1048576", "far away")
		})
	case "xlsx-truncated": // a valid workbook cut in half
		b, err := workbook(func(f *excelize.File) error { return f.SetCellStr("Sheet1", "A1", "Code") })
		return b[:len(b)/2], err
	case "zip-not-xlsx": // a zip holding a text file
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, _ := zw.Create("readme.txt")
		io.WriteString(w, "not a workbook")
		zw.Close()
		return buf.Bytes(), nil
	case "xlsx-no-sheet-part": // a workbook whose sheet part is missing
		b, err := workbook(func(f *excelize.File) error { return f.SetCellStr("Sheet1", "A1", "Code") })
		if err != nil {
			return nil, err
		}
		return rezip(b, func(name string) bool { return name != "xl/worksheets/sheet1.xml" }, nil)
	case "xlsx-bomb": // the sheet part says it inflates to 8 GiB
		b, err := workbook(func(f *excelize.File) error { return f.SetCellStr("Sheet1", "A1", "Code") })
		if err != nil {
			return nil, err
		}
		return rezip(b, nil, map[string]uint64{"xl/worksheets/sheet1.xml": 8 << 30})
	}
	return nil, fmt.Errorf("gen: unknown kind %q", kind)
}

func workbook(fill func(*excelize.File) error) ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close()
	if err := fill(f); err != nil {
		return nil, err
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// rezip copies a zip, keeping the entries keep accepts (all when nil).
// An entry named in bomb is written raw, its header claiming the given
// uncompressed size: a zip bomb as a reader sees it before inflating.
func rezip(b []byte, keep func(string) bool, bomb map[string]uint64) ([]byte, error) {
	return rezipWith(b, keep, bomb, nil)
}

// rezipWith is rezip that also replaces the text of the parts in replace.
func rezipWith(b []byte, keep func(string) bool, bomb map[string]uint64, replace map[string]string) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if keep != nil && !keep(f.Name) {
			continue
		}
		if size, ok := bomb[f.Name]; ok {
			// A deflate stream of 16 MiB of '<' bytes, under a header
			// claiming size: what a reader sees before it inflates.
			var raw bytes.Buffer
			fw, _ := flate.NewWriter(&raw, flate.BestCompression)
			fw.Write(bytes.Repeat([]byte("<"), 16<<20))
			fw.Close()
			h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, CompressedSize64: uint64(raw.Len()), UncompressedSize64: size}
			w, err := zw.CreateRaw(h)
			if err != nil {
				return nil, err
			}
			w.Write(raw.Bytes())
			continue
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			return nil, err
		}
		if text, ok := replace[f.Name]; ok {
			io.WriteString(w, text)
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		io.Copy(w, rc)
		rc.Close()
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// cmdDamage: `damage KIND FILE` damages a journal in place.
func cmdDamage(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: damage truncate|middle|garbage|empty|nul FILE")
	}
	file := ts.MkAbs(args[1])
	b, err := os.ReadFile(file)
	ts.Check(err)
	lines := strings.SplitAfter(string(b), "\n")
	switch args[0] {
	case "truncate": // the last line cut short, as a crash mid-write leaves it
		b = b[:len(b)-20]
	case "truncate-header": // only half the first line is left
		b = b[:len(lines[0])/2]
	case "middle": // a record line in the middle edited by hand
		mid := len(lines) / 2
		lines[mid] = strings.Replace(lines[mid], `"committed"`, `"failed"`, 1)
		lines[mid] = strings.Replace(lines[mid], `"st":"`, `"st":"x`, 1)
		b = []byte(strings.Join(lines, ""))
	case "drop-checksums": // every line without its checksum
		for i, l := range lines {
			if _, rest, ok := strings.Cut(l, " "); ok {
				lines[i] = rest
			}
		}
		b = []byte(strings.Join(lines, ""))
	case "garbage":
		b, _ = genInput(ts, "garbage", "4096")
	case "nul": // a run of NUL bytes in the middle, as some file systems leave after a crash
		mid := len(lines) / 2
		lines[mid] = strings.Repeat("\x00", len(lines[mid]))
		b = []byte(strings.Join(lines, ""))
	case "empty":
		b = nil
	default:
		ts.Fatalf("damage: unknown kind %q", args[0])
	}
	ts.Check(os.WriteFile(file, b, 0o644))
}

// cmdBadServer: `badserver KIND [MATCH]` serves a sandbox whose answers to
// requests matching MATCH are replaced by KIND.
func cmdBadServer(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: badserver KIND [MATCH]")
	}
	kind, match := args[0], ""
	if len(args) == 2 {
		match = args[1]
	}
	if _, ok := badAnswers[kind]; !ok {
		ts.Fatalf("badserver: unknown kind %q", kind)
	}
	sb, err := sandbox.New(sandbox.Options{})
	ts.Check(err)
	inner := httptest.NewServer(sb)
	ts.Defer(inner.Close)
	u, _ := url.Parse(inner.URL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RequestURI(), match) {
			badAnswers[kind](w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("MIGRATE_TARGET", srv.URL+sandbox.BasePath)
	ts.Setenv("MIGRATE_USER", "demo")
	ts.Setenv("MIGRATE_PASSWORD", "demo")
	ts.Setenv("MIGRATE_AUTH", "basic")
}

// answer is a handler that answers status with body, of content type
// ctype (no header when "", nothing written when body is "").
func answer(status int, ctype, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(status)
		if body != "" {
			io.WriteString(w, body)
		}
	}
}

var badAnswers = map[string]http.HandlerFunc{
	"malformed-json":         answer(http.StatusOK, "application/json", `{"value": [{"CUSTNAME": "C1", `),
	"html-502":               answer(http.StatusBadGateway, "text/html", "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"),
	"html-200":               answer(http.StatusOK, "text/html", "<html><body>Please sign in to the corporate proxy</body></html>"),
	"unknown-error-400":      answer(http.StatusBadRequest, "application/json", `{"problem": {"what": "something", "code": [1,2,3]}}`),
	"error-500-empty":        answer(http.StatusInternalServerError, "", ""),
	"unauthorized-html":      answer(http.StatusUnauthorized, "text/html", "<html><body>401 Authorization Required</body></html>"),
	"truncated-multipart":    answer(http.StatusOK, "multipart/mixed; boundary=batch_x", "--batch_x\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 201 Created\r\nContent-Type: application/json\r\n\r\n{\"FAMILYNAME\":"),
	"multipart-no-boundary":  answer(http.StatusOK, "multipart/mixed", "--batch_x\r\n\r\n--batch_x--\r\n"),
	"batch-json-wrong-shape": answer(http.StatusOK, "application/json", `{"responses": {"id": "1", "status": "two hundred"}}`),
	"batch-json-no-answers":  answer(http.StatusOK, "application/json", `{"responses": []}`),
	"huge": func(w http.ResponseWriter, r *http.Request) {
		// More than the client's 256 MiB limit: a JSON string that never ends.
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"value": "`)
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range 260 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	},
	"metadata-garbage": answer(http.StatusOK, "application/xml", `<?xml version="1.0"?><edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx"><edmx:DataServices><Schema><EntityType Name="X"><Key><PropertyRef Name=`),
	"reset": func(w http.ResponseWriter, r *http.Request) {
		// The connection is dropped without an answer.
		hj, ok := w.(http.Hijacker)
		if !ok {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		c, _, err := hj.Hijack()
		if err == nil {
			c.Close()
		}
	},
}
