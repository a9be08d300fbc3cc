package source

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// dump reads every row and renders rows and errors one a line, so a table
// test states the whole outcome: "2 [a b <nil>]", "error: f.csv:3: ...".
func dump(r Reader) string {
	var b strings.Builder
	fmt.Fprintf(&b, "header %q\n", r.Header().Names)
	for i := 0; i < 1000; i++ {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
			var se *Error
			if !errors.As(err, &se) || !se.RowOnly {
				break
			}
			continue
		}
		fmt.Fprintf(&b, "%s %s\n", row.Loc, cells(row.Cells))
	}
	return b.String()
}

func cells(cs []Cell) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		switch v := c.(type) {
		case nil:
			parts[i] = "<nil>"
		case string:
			parts[i] = fmt.Sprintf("%q", v)
		case Number:
			parts[i] = "N:" + string(v)
		case bool:
			parts[i] = fmt.Sprintf("B:%v", v)
		case time.Time:
			parts[i] = "T:" + v.Format("2006-01-02T15:04:05.000Z07:00")
		default:
			parts[i] = fmt.Sprintf("?%T", v)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// sstOf is a table of shared strings holding texts (written as XML text,
// escaped where it must be).
func sstOf(texts ...string) *sharedStrings {
	var b strings.Builder
	b.WriteString("<sst>")
	for _, t := range texts {
		b.WriteString("<si><t>")
		_ = xml.EscapeText(&b, []byte(t))
		b.WriteString("</t></si>")
	}
	b.WriteString("</sst>")
	return newSharedStrings("xl/sharedStrings.xml", io.NopCloser(strings.NewReader(b.String())))
}
