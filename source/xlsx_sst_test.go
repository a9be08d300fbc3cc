package source

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// referenceSST reads a table of shared strings with encoding/xml, as the
// reader did before its byte scanner: the reference the scanner must match.
func referenceSST(body string) ([]string, error) {
	d := xml.NewDecoder(strings.NewReader(body))
	var (
		out       []string
		b         strings.Builder
		inSI, inT bool
		skip      int
	)
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "si":
				inSI = true
				b.Reset()
			case "rPh", "phoneticPr":
				skip++
			case "t":
				inT = inSI && skip == 0
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "si":
				inSI = false
				out = append(out, unescapeOOXML(b.String()))
			case "rPh", "phoneticPr":
				skip--
			case "t":
				inT = false
			}
		case xml.CharData:
			if inT {
				b.Write(t)
			}
		}
	}
}

// TestSharedStringsAgainstXML compares the byte scanner with encoding/xml
// on what spreadsheet programs write and on the rarer XML they may.
func TestSharedStringsAgainstXML(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("long text ", 20_000) // past the scanner's buffer
	var chunks strings.Builder                   // texts across the table's chunks, one longer than a chunk, empty ones
	chunks.WriteString("<sst>")
	for i := range 3000 {
		chunks.WriteString("<si><t>" + strings.Repeat(string(rune('a'+i%26)), 700+i%600) + "</t></si><si><t/></si>")
		if i == 1500 {
			chunks.WriteString("<si><t>" + strings.Repeat("big ", 400_000) + "</t></si>")
		}
	}
	chunks.WriteString("</sst>")
	for name, body := range map[string]string{
		"plain":       `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\r\n" + `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="3" uniqueCount="3"><si><t>Code</t></si><si><t xml:space="preserve">  padded </t></si><si><t>שלום</t></si></sst>`,
		"entities":    `<sst><si><t>a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#65;&#x5D0;</t></si></sst>`,
		"rich":        `<sst><si><r><rPr><b/></rPr><t>rich </t></r><r><t>text</t></r><rPh sb="0" eb="1"><t>ふりがな</t></rPh><phoneticPr fontId="1"/></si></sst>`,
		"empty":       `<sst><si/><si><t/></si><si><t></t></si><si><t>x</t></si></sst>`,
		"prefixed":    `<x:sst xmlns:x="urn:x"><x:si><x:t>one</x:t></x:si><x:si><x:t>two</x:t></x:si></x:sst>`,
		"line ends":   "<sst><si><t>a\r\nb\rc\nd</t></si></sst>",
		"escapes":     `<sst><si><t>one_x000D_two _x005F_x0041_</t></si></sst>`,
		"cdata":       `<sst><si><t><![CDATA[a <b> & c]]> d</t></si></sst>`,
		"comments":    `<sst><!-- a comment with <si> and > inside --><si><t>a<!-- x -->b</t></si><?pi with > in it?><si><t>c</t></si></sst>`,
		"long":        `<sst><si><t>` + long + `</t></si><si><t>after</t></si></sst>`,
		"gt in attrs": `<sst><si><t a="x>y">v</t></si></sst>`,
		"chunks":      chunks.String(),
	} {
		t.Run(name, func(t *testing.T) {
			want, err := referenceSST(body)
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			s := newSharedStrings("xl/sharedStrings.xml", io.NopCloser(strings.NewReader(body)))
			for i, w := range want {
				got, err := s.get(i)
				if err != nil || got != w {
					t.Fatalf("string %d: %q, %v; want %q", i, truncateString(got), err, truncateString(w))
				}
			}
			if got, err := s.get(len(want)); !errors.Is(err, errNoSharedString) {
				t.Errorf("past the end: %q, %v", got, err)
			}
		})
	}
}

func truncateString(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// TestSharedStringsDamaged: a table that ends inside a string or holds an
// unknown entity is an error naming the part, kept for later look-ups,
// while the strings before it read.
func TestSharedStringsDamaged(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"cut":    `<sst><si><t>ok</t></si><si><t>cut`,
		"entity": `<sst><si><t>ok</t></si><si><t>a &nbsp; b</t></si></sst>`,
	} {
		s := newSharedStrings("xl/sharedStrings.xml", io.NopCloser(strings.NewReader(body)))
		if got, err := s.get(0); got != "ok" || err != nil {
			t.Errorf("%s: first string %q, %v", name, got, err)
		}
		for range 2 {
			_, err := s.get(1)
			if err == nil || errors.Is(err, errNoSharedString) || !strings.Contains(err.Error(), "xl/sharedStrings.xml") {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// TestFilesOpensAWorkbookOnce: readers of one workbook opened through a
// Files share it (its shared strings are read once, in step with the
// furthest reader), read the same rows concurrently, and outlive each
// other's Close.
func TestFilesOpensAWorkbookOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shared.xlsx")
	var rows []string
	var sst []string
	for r := 1; r <= 3000; r++ {
		rows = append(rows, fmt.Sprintf(`<row r="%d"><c r="A%d" t="s"><v>%d</v></c><c r="B%d" t="s"><v>%d</v></c></row>`, r, r, len(sst), r, len(sst)+1))
		sst = append(sst, fmt.Sprintf("<t>a%d</t>", r), fmt.Sprintf("<t>b%d</t>", r))
	}
	book{sheets: []string{"S"}, sheetXML: []string{rowsXML(rows...)}, sst: sst}.write(t, path)
	want := func() string {
		r, err := Open(Options{Name: "shared.xlsx", Path: path})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		return dump(r)
	}()
	files := &Files{}
	defer files.Close()
	header, err := files.Open(Options{Name: "shared.xlsx", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	header.Close()
	got := make([]string, 3)
	var wg sync.WaitGroup
	for i := range got {
		r, err := files.Open(Options{Name: "shared.xlsx", Path: path})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			got[i] = dump(r)
		}()
	}
	wg.Wait()
	if len(files.books) != 1 {
		t.Errorf("%d workbooks open, want 1", len(files.books))
	}
	for i, g := range got {
		if g != want {
			t.Errorf("reader %d read\n%.300s\nwant\n%.300s", i, g, want)
		}
	}
}
