package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdTamper changes a file as someone who wants it to say something else
// would: `tamper FILE FROM TO` replaces the first FROM in FILE, and when
// the line it is on is a journal line, gives it its checksum again (so
// only the hash chain can tell); `tamper FILE.zip MEMBER FROM TO` does so
// to a member of an evidence file, and with a last argument `rehash`
// writes the member's new SHA-256 into manifest.json too.
func cmdTamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! tamper")
	}
	switch {
	case len(args) == 3:
		path := ts.MkAbs(args[0])
		data, err := os.ReadFile(path)
		ts.Check(err)
		ts.Check(os.WriteFile(path, replaceLine(ts, data, args[1], args[2]), 0o600))
	case len(args) == 4 || len(args) == 5 && args[4] == "rehash":
		tamperZip(ts, ts.MkAbs(args[0]), args[1], args[2], args[3], len(args) == 5)
	default:
		ts.Fatalf("usage: tamper FILE FROM TO | tamper FILE.zip MEMBER FROM TO [rehash]")
	}
}

// replaceLine replaces the first from in data; a journal line it is on
// gets its CRC-32C again.
func replaceLine(ts *testscript.TestScript, data []byte, from, to string) []byte {
	i := bytes.Index(data, []byte(from))
	if i < 0 {
		ts.Fatalf("tamper: no %q", from)
	}
	start := bytes.LastIndexByte(data[:i], '\n') + 1
	end := i + bytes.IndexByte(data[i:], '\n')
	line := string(data[start:end])
	line = strings.Replace(line, from, to, 1)
	if len(line) > 9 && line[8] == ' ' && line[9] == '{' {
		js := line[9:]
		line = fmt.Sprintf("%08x %s", crc32.Checksum([]byte(js), crc32.MakeTable(crc32.Castagnoli)), js)
	}
	return append(append(append([]byte{}, data[:start]...), line...), data[end:]...)
}

func tamperZip(ts *testscript.TestScript, path, member, from, to string, rehash bool) {
	zr, err := zip.OpenReader(path)
	ts.Check(err)
	type file struct {
		name string
		data []byte
	}
	var files []file
	found := false
	for _, f := range zr.File {
		rc, err := f.Open()
		ts.Check(err)
		data, err := io.ReadAll(rc)
		ts.Check(err)
		rc.Close()
		if f.Name == member {
			data, found = replaceLine(ts, data, from, to), true
		}
		files = append(files, file{f.Name, data})
	}
	zr.Close()
	if !found {
		ts.Fatalf("tamper: %s has no member %s", path, member)
	}
	if rehash {
		for i, f := range files {
			if f.name != "manifest.json" {
				continue
			}
			var m map[string]any
			ts.Check(json.Unmarshal(f.data, &m))
			for _, x := range m["members"].([]any) {
				mb := x.(map[string]any)
				if mb["name"] == member {
					for _, g := range files {
						if g.name == member {
							sum := sha256.Sum256(g.data)
							mb["sha256"] = hex.EncodeToString(sum[:])
						}
					}
				}
			}
			files[i].data, err = json.MarshalIndent(m, "", "  ")
			ts.Check(err)
		}
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f.name)
		ts.Check(err)
		_, err = w.Write(f.data)
		ts.Check(err)
	}
	ts.Check(zw.Close())
	ts.Check(os.WriteFile(path, buf.Bytes(), 0o600))
}
