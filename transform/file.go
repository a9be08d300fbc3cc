package transform

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"
)

// DefaultMaxFileSize is the largest attachment file() reads when
// Options.MaxFileSize is 0.
const DefaultMaxFileSize = 20 << 20

// mimeTypes are the types of the files consultants attach; other extensions
// fall back to the system table, then application/octet-stream.
var mimeTypes = map[string]string{
	".pdf":  "application/pdf",
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".gif":  "image/gif",
	".bmp":  "image/bmp",
	".tif":  "image/tiff",
	".tiff": "image/tiff",
	".txt":  "text/plain",
	".csv":  "text/csv",
	".xml":  "application/xml",
	".json": "application/json",
	".zip":  "application/zip",
	".doc":  "application/msword",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xls":  "application/vnd.ms-excel",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".msg":  "application/vnd.ms-outlook",
	".eml":  "message/rfc822",
}

func mimeType(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	if t, ok := mimeTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		if i := strings.IndexByte(t, ';'); i >= 0 {
			t = t[:i]
		}
		return t
	}
	return "application/octet-stream"
}

// fnFile implements file(path): the file's content as a data URI
// (docs/service.md, Attachments), the path resolved against the plan's folder.
func (p *Program) fnFile(params ...any) (any, error) {
	if err := arity("file", params, 1, 1); err != nil {
		return nil, err
	}
	name, ok := params[0].(string)
	if !ok {
		return nil, argError("file", 1, "a file path", params[0])
	}
	if strings.TrimSpace(name) == "" {
		return nil, nil
	}
	path, err := p.resolveFile(name)
	if err != nil {
		return nil, err
	}
	// Look before opening: opening a named pipe blocks until somebody
	// writes to it, and a device can be read for ever.
	if err := regularFile(name, path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("file: %s: %v", quote(name), unwrapPathError(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("file: %s: %v", quote(name), unwrapPathError(err))
	}
	if !st.Mode().IsRegular() {
		// Replaced between the look and the open.
		return nil, fmt.Errorf("file: %s is not a regular file", quote(name))
	}
	if st.Size() > p.maxFile {
		return nil, fmt.Errorf("file: %s is %d bytes, more than the limit of %d", quote(name), st.Size(), p.maxFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, p.maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("file: %s: %v", quote(name), unwrapPathError(err))
	}
	if int64(len(data)) > p.maxFile {
		return nil, fmt.Errorf("file: %s is more than the limit of %d bytes", quote(name), p.maxFile)
	}
	var b strings.Builder
	prefix := "data:" + mimeType(path) + ";base64,"
	b.Grow(len(prefix) + base64.StdEncoding.EncodedLen(len(data)))
	b.WriteString(prefix)
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	enc.Write(data)
	enc.Close()
	return b.String(), nil
}

// regularFile refuses what is not an ordinary file: a folder, a named pipe,
// a device or a socket.
func regularFile(name, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("file: %s: %v", quote(name), unwrapPathError(err))
	}
	switch m := st.Mode(); {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("file: %s is a folder, not a file", quote(name))
	case m&os.ModeNamedPipe != 0:
		return fmt.Errorf("file: %s is a named pipe, not a file; attach a copy of its content", quote(name))
	default:
		return fmt.Errorf("file: %s is a device or socket, not a file", quote(name))
	}
}

// resolveFile places name in the plan's folder and refuses a path that
// leaves it (../, an absolute path elsewhere, a symbolic link out) unless
// Options.AllowOutside.
func (p *Program) resolveFile(name string) (string, error) {
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.dir, path)
	}
	path = filepath.Clean(path)
	if p.opts.AllowOutside {
		return path, nil
	}
	base, err := filepath.Abs(p.dir)
	if err != nil {
		return "", fmt.Errorf("file: %v", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("file: %v", err)
	}
	if !within(base, abs) {
		return "", fmt.Errorf("file: %s is outside the plan's folder; move it there or allow files outside it", quote(name))
	}
	// A symbolic link inside the folder may still point out of it.
	if realBase, err := filepath.EvalSymlinks(base); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil && !within(realBase, real) {
			return "", fmt.Errorf("file: %s links outside the plan's folder; move it there or allow files outside it", quote(name))
		}
	}
	return abs, nil
}

func within(base, path string) bool {
	rel, err := filepath.Rel(base, path)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
