package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // timezone names validate the same on every machine

	"github.com/migrate-tool/migrate/internal/didyoumean"
	"github.com/migrate-tool/migrate/odata"
	"github.com/migrate-tool/migrate/source"
	"go.yaml.in/yaml/v3"
)

// Keys of each block, from the format table (format.go).
var (
	topKeys     = keyNames("top")
	targetKeys  = keyNames("target")
	connKeys    = keyNames("connection")
	sourceKeys  = keyNames("source")
	lookupKeys  = keyNames("lookup")
	mapKeys     = keyNames("map")
	stepKeys    = keyNames("step")
	subformKeys = keyNames("subform")
	linkKeys    = keyNames("link")
)

// csvOnly, xlsxOnly and serviceOnly are the source keys that make sense
// for one kind of source.
var (
	csvOnly     = onlyFor("csv")
	xlsxOnly    = onlyFor("xlsx")
	serviceOnly = onlyFor("service")
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// connNameRE: a connection's name is part of environment variable names.
var connNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// IsConnectionName reports whether name may name a connection: letters,
// digits and "_", starting with a letter (it names MIGRATE_<NAME>_*).
func IsConnectionName(name string) bool { return connNameRE.MatchString(name) }

// Load reads and decodes a plan file. The returned plan is never nil; when
// the diagnostics hold an error it is incomplete and must not be run.
func Load(path string) (*Plan, Diagnostics) {
	data, err := os.ReadFile(path)
	if err != nil {
		var msg string
		switch {
		case errors.Is(err, os.ErrNotExist):
			msg = "the plan file does not exist"
		case errors.Is(err, os.ErrPermission):
			msg = "the plan file cannot be read: permission denied"
		default:
			msg = "the plan file cannot be read: " + err.Error()
		}
		return &Plan{Path: path, Dir: filepath.Dir(path)}, Diagnostics{{Pos: Pos{File: path}, Message: msg}}
	}
	p, ds := Decode(path, data)
	p.Dir = filepath.Dir(path)
	return p, ds
}

// Decode decodes a plan from data; name is the file name used in positions
// and as Path. Dir is left empty (Load sets it). Decode runs Check, so the
// diagnostics cover the static checks too, sorted by position.
func Decode(name string, data []byte) (p *Plan, ds Diagnostics) {
	sum := sha256.Sum256(data)
	p = &Plan{Path: name, Hash: hex.EncodeToString(sum[:])}
	w := &walker{file: name, lines: strings.Split(string(data), "\n")}
	defer func() {
		// Bad input never panics the caller: the YAML parser has had
		// panics on hostile input in the past.
		if r := recover(); r != nil {
			ds = Diagnostics{{Pos: Pos{File: name, Line: 1, Col: 1}, Message: "the YAML parser failed on this file; check its syntax"}}
		}
	}()

	root, ok := w.parse(data)
	p.text = newText(w, root)
	if ok && root != nil {
		w.decodePlan(p, root)
	}
	if w.overflow {
		// Whatever else was found is an artefact of the cut-off walk.
		for _, d := range w.list {
			if strings.HasPrefix(d.Message, overflowMessage) {
				return p, Diagnostics{d}
			}
		}
	}
	if ok {
		w.list = append(w.list, p.check()...)
	}
	return p, w.sorted()
}

// parse reads the YAML document, reporting syntax errors, a second
// document and tab indentation in words a person can act on.
func (w *walker) parse(data []byte) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			w.errorf(Pos{File: w.file, Line: 1, Col: 1}, "the plan is empty; it needs at least \"version: 1\" and \"steps\"")
			return nil, false
		}
		w.syntaxError(data, err)
		return nil, false
	}
	for {
		// A further document is refused; an empty one (a trailing "---")
		// is harmless.
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			w.syntaxError(data, err)
			break
		}
		if len(next.Content) > 0 && !isNull(next.Content[0]) {
			w.errorf(w.pos(&next), "a plan is one YAML document; this second document (after \"---\") is not allowed")
			break
		}
	}
	if len(doc.Content) == 0 {
		w.errorf(Pos{File: w.file, Line: 1, Col: 1}, "the plan is empty; it needs at least \"version: 1\" and \"steps\"")
		return nil, false
	}
	return doc.Content[0], true
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError reports a YAML syntax error. yaml.v3 names the line where
// the enclosing block starts, not where the problem is; the first line
// at which the document stops parsing is found by bisecting its prefixes.
func (w *walker) syntaxError(data []byte, err error) {
	msg := err.Error()
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	if bad := firstBadLine(data); bad > 0 {
		if line > 0 && line < bad {
			msg += fmt.Sprintf(" (in the block that starts on line %d)", line)
		}
		line = bad
	}
	if line < 1 || line > len(w.lines) {
		line = max(1, min(line, len(w.lines)))
	}
	text := w.lines[line-1]
	indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]
	if i := strings.IndexByte(indent, '\t'); i >= 0 {
		w.errorf(Pos{File: w.file, Line: line, Col: i + 1}, "a tab indents this line; YAML indents with spaces only")
		return
	}
	w.errorf(Pos{File: w.file, Line: line, Col: len(indent) + 1}, "the plan is not valid YAML: %s", msg)
}

// firstBadLine returns the smallest n such that the first n lines of data
// do not parse, or 0.
func firstBadLine(data []byte) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 100_000 {
		return 0
	}
	fails := func(n int) bool {
		prefix := bytes.Join(lines[:n], nil)
		dec := yaml.NewDecoder(bytes.NewReader(prefix))
		for {
			var n yaml.Node
			err := dec.Decode(&n)
			if errors.Is(err, io.EOF) {
				return false
			}
			if err != nil {
				return true
			}
		}
	}
	if !fails(len(lines)) {
		return 0
	}
	lo, hi := 0, len(lines) // fails(hi) is true; fails(0) is false
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func (w *walker) decodePlan(p *Plan, root *yaml.Node) {
	top, ok := w.mapping(root, "the plan", nil)
	if !ok {
		return
	}
	// Top-level keys starting with "x-" are the user's own: a home for
	// anchors (x-defaults: &defaults ...) that the plan itself ignores.
	var kept []entry
	for _, e := range top.entries {
		switch {
		case strings.HasPrefix(e.key, "x-"):
			delete(top.byKey, e.key)
		case !slices.Contains(topKeys, e.key):
			w.errorf(e.kpos, "unknown key %q in the plan%s", e.key, didyoumean.Hint(e.key, topKeys))
			delete(top.byKey, e.key)
		default:
			kept = append(kept, e)
		}
	}
	top.entries = kept
	p.Spans = w.spans(top)
	w.require(top, "the plan", requiredKeys("top")...)
	for _, e := range top.entries {
		switch e.key {
		case "version":
			if v, ok := w.integer(e); ok {
				p.Version = v
				if v != 1 {
					w.errorf(w.pos(e.val), "\"version\" must be 1 (the only plan format there is), not %s", describe(e.val))
				}
			}
		case "name":
			set(&p.Name)(w.text(e))
		case "target":
			w.decodeTarget(&p.Target, e)
		case "connections":
			w.decodeConnections(p, e)
		case "sources":
			w.decodeSources(p, e)
		case "lookups":
			w.decodeLookups(p, e)
		case "tests":
			p.Tests = w.decodeTests(e.val, "\"tests\"")
		case "maps":
			w.decodeMaps(p, e)
		case "steps":
			p.StepsPos = e.kpos
			items, ok := w.sequence(e.val, "\"steps\"")
			if ok && len(items) == 0 {
				w.errorf(e.kpos, "the plan has no steps; list at least one under \"steps\"")
			}
			if len(items) > MaxSteps {
				w.errorf(e.kpos, "the plan has %d steps, more than the %d a plan may have; a plan is one load: split it into several plans (each keeps its own journal)", len(items), MaxSteps)
				items = nil
			}
			for i, it := range items {
				if s := w.decodeStep(it, i+1); s != nil {
					p.Steps = append(p.Steps, s)
				}
			}
		}
	}
}

func (w *walker) decodeTarget(t *Target, e entry) {
	t.Pos = e.kpos
	if isNull(e.val) {
		return
	}
	f, ok := w.mapping(e.val, "target", targetKeys)
	if !ok {
		return
	}
	t.Spans = w.spans(f)
	for _, e := range f.entries {
		switch e.key {
		case "url":
			set(&t.URL)(w.serviceURL(e, "MIGRATE_"))
		case "dialect":
			set(&t.Dialect)(w.choice(e, "target"))
		case "language":
			set(&t.Language)(w.bounds(e, "target", "\"language\" must be a language code of 1 or more (leave it out for none), not %d"))
		case "metadata":
			set(&t.Metadata)(w.text(e))
		case "system_version":
			if s, ok := w.text(e); ok {
				v, err := odata.ParseVersion(s)
				if err != nil {
					w.errorf(w.pos(e.val), "\"system_version\" must be the server's version as MAJOR.MINOR, such as \"21.0\", not %s", describe(e.val))
				} else {
					t.SystemVersion, t.SystemVersionPos = v, w.pos(e.val)
				}
			}
		case "auth":
			set(&t.Auth)(w.choice(e, "target"))
		case "token_url":
			set(&t.TokenURL)(w.tokenURL(e))
		case "scopes":
			t.Scopes = w.scopes(e, "\"target\"")
		case "batch_size":
			set(&t.BatchSize)(w.bounds(e, "target", "\"batch_size\" must be between 1 and 1000, not %d"))
		case "concurrency":
			set(&t.Concurrency)(w.bounds(e, "target", "\"concurrency\" must be at least 1, not %d"))
		case "transactions_left":
			if v, ok := w.bounds(e, "target", "\"transactions_left\" must be 0 or more, not %d"); ok {
				t.TransactionsLeft, t.HasTransactionsLeft = v, true
			}
		case "calls_per_minute":
			set(&t.CallsPerMinute)(w.bounds(e, "target", "\"calls_per_minute\" must be at least 1 (leave it out for no limit), not %d"))
		case "companies":
			names, pos := w.names(e, "\"target\"", "company names")
			seen := map[string]bool{}
			for i, n := range names {
				switch {
				case !odata.IsCompanyName(n):
					w.errorf(pos[i], "\"companies\" lists %s, which is no company name (the last segment of the service root, such as demo)", quote(n))
				case seen[n]:
					w.errorf(pos[i], "\"companies\" lists %s twice", quote(n))
				default:
					seen[n] = true
					t.Companies = append(t.Companies, n)
				}
			}
		case "max_same_errors":
			set(&t.MaxSameErrors)(w.bounds(e, "target", "\"max_same_errors\" must be at least 1, not %d"))
		case "timezone":
			if s, ok := w.text(e); ok {
				if _, err := time.LoadLocation(s); err != nil || s == "" || strings.EqualFold(s, "local") {
					w.errorf(w.pos(e.val), "\"timezone\" must be a time zone name such as UTC or Asia/Jerusalem, not %s", describe(e.val))
				} else {
					t.Timezone = s
				}
			}
		case "decimal_separator":
			set(&t.DecimalSeparator)(w.choice(e, "target"))
		case "empty":
			if isNull(e.val) && e.val.Value != "" {
				// `empty: null` and `empty: ~` are YAML nulls; they can
				// only mean the null policy.
				t.Empty = "null"
			} else {
				set(&t.Empty)(w.choice(e, "target"))
			}
		}
	}
	if t.Dialect == "odata" {
		// The ERP's URL segments: a standard service has neither
		// (docs/other-services.md).
		for _, e := range f.entries {
			switch e.key {
			case "language":
				w.errorf(w.pos(e.val), "\"language\" is the ERP's segment of the service root; a service of dialect odata has none: remove it")
			case "companies":
				w.errorf(w.pos(e.val), "\"companies\" are the ERP's companies of one installation; a service of dialect odata has none: remove it")
			}
		}
	}
}

func (w *walker) decodeSources(p *Plan, e entry) {
	for _, se := range w.optEntries(e, "\"sources\"") {
		s := &Source{Name: se.key, Pos: se.kpos}
		what := fmt.Sprintf("source %q", se.key)
		w.checkName(se, "source")
		if se.key == "group" {
			w.errorf(se.kpos, "a source may not be called \"group\": \"source: group\" means the rows of the parent's group")
		}
		sf, ok := w.mapping(se.val, what, sourceKeys)
		_, service := sf.get("connection")
		if ok && service {
			w.require(sf, what, "entity")
			if fe, ok := sf.get("file"); ok {
				w.errorf(fe.kpos, "%s reads connection %s: it takes no file (a source is either a file or an entity of a connection)", what, quote(connectionOf(sf)))
			}
		} else if ok {
			w.require(sf, what, "file")
			if _, ok := sf.get("entity"); ok {
				w.require(sf, what, "connection")
			}
		}
		s.Spans = w.spans(sf)
		xlsx := false
		if fe, ok := sf.get("file"); ok {
			if v, ok := w.text(fe); ok {
				s.File, s.FilePos = v, w.pos(fe.val)
				xlsx = source.IsWorkbook(v)
				if strings.EqualFold(filepath.Ext(v), ".xls") {
					w.errorf(w.pos(fe.val), "%s is an old .xls workbook, which cannot be read; save it as .xlsx", quote(v))
				}
				if strings.TrimSpace(v) == "" {
					w.errorf(w.pos(fe.val), "\"file\" of %s is empty; name the CSV or XLSX file", what)
				}
				if strings.ContainsAny(v, "\t\n\r\f\v\b\a\x00") {
					// A Windows path in double quotes: YAML reads "C:\temp"
					// as C:, a tab and "emp", and the file is never found.
					w.errorf(w.pos(fe.val), "\"file\" of %s holds a control character (%s): in double quotes YAML reads \\t, \\n, \\f, \\b… as one; write a Windows path in single quotes ('C:\\data\\orders.csv') or with forward slashes (C:/data/orders.csv)", what, strconv.Quote(v))
				}
			}
		}
		for _, ke := range sf.entries {
			if service && ke.key == "file" {
				continue // reported above
			}
			if service && ke.key != "connection" && ke.key != "entity" && !slices.Contains(serviceOnly, ke.key) && ke.key != "decimal_separator" {
				w.errorf(ke.kpos, "%q is for files; %s reads connection %s", ke.key, what, quote(connectionOf(sf)))
				continue
			}
			if !service && slices.Contains(serviceOnly, ke.key) {
				w.errorf(ke.kpos, "%q is for a source that reads a connection's entity; %s is a file", ke.key, what)
				continue
			}
			if s.File != "" {
				if xlsx && slices.Contains(csvOnly, ke.key) {
					w.errorf(ke.kpos, "%q is for CSV files; %s is a workbook (%s)", ke.key, what, quote(s.File))
					continue
				}
				if !xlsx && slices.Contains(xlsxOnly, ke.key) {
					w.errorf(ke.kpos, "%q is for XLSX workbooks; %s is a CSV file (%s)", ke.key, what, quote(s.File))
					continue
				}
			}
			switch ke.key {
			case "delimiter":
				if v, ok := w.text(ke); ok {
					if v == `\t` {
						v = "\t"
					}
					if r := []rune(v); len(r) != 1 || r[0] == '"' || r[0] == '\n' || r[0] == '\r' {
						w.errorf(w.pos(ke.val), "\"delimiter\" must be one character such as \";\" or \"\\t\", not %s", describe(ke.val))
					} else {
						s.Delimiter = v
					}
				}
			case "encoding":
				if v, ok := w.text(ke); ok {
					if canon, ok := source.EncodingName(v); ok {
						s.Encoding = canon
					} else {
						names := source.Encodings()
						w.errorf(w.pos(ke.val), "unknown encoding %s; use %s or %s%s", quote(v),
							strings.Join(names[:len(names)-1], ", "), names[len(names)-1], didyoumean.Hint(strings.ToLower(v), names))
					}
				}
			case "lazy_quotes":
				set(&s.LazyQuotes)(w.boolean(ke))
			case "decimal_separator":
				set(&s.DecimalSeparator)(w.choice(ke, "source"))
			case "sheet":
				set(&s.Sheet)(w.text(ke))
			case "header_row":
				set(&s.HeaderRow)(w.bounds(ke, "source", "\"header_row\" must be 1 or more, not %d"))
			case "connection":
				w.textAt(ke, &s.Connection, &s.ConnectionPos)
			case "entity":
				w.textAt(ke, &s.Entity, &s.EntityPos)
			case "select":
				s.Select, _ = w.names(ke, fmt.Sprintf("\"select\" of %s", what), "field")
			case "expand":
				s.Expand, _ = w.names(ke, fmt.Sprintf("\"expand\" of %s", what), "sub-form")
			case "filter":
				w.textAt(ke, &s.Filter, &s.FilterPos)
			}
		}
		p.Sources = append(p.Sources, s)
	}
}

func (w *walker) decodeLookups(p *Plan, e entry) {
	for _, le := range w.optEntries(e, "\"lookups\"") {
		l := &Lookup{Name: le.key, Pos: le.kpos, Missing: "error"}
		what := fmt.Sprintf("lookup %q", le.key)
		w.checkName(le, "lookup")
		lf, ok := w.mapping(le.val, what, lookupKeys)
		_, target := lf.get("entity")
		switch {
		case ok && target:
			w.require(lf, what, "entity", "key", "value")
			if se, ok := lf.get("source"); ok {
				w.errorf(se.kpos, "%s reads the target's %s: it takes no source (a lookup reads either a source or an entity)", what, quote(entityOf(lf)))
			}
		case ok:
			w.require(lf, what, "source", "key", "value")
			if fe, ok := lf.get("filter"); ok {
				w.errorf(fe.kpos, "%s: filter goes with entity (a lookup that reads the target); a source lookup takes every row of its source", what)
			}
		}
		l.Spans = w.spans(lf)
		for _, ke := range lf.entries {
			switch ke.key {
			case "source":
				if v, ok := w.text(ke); ok && !target {
					l.Source, l.SourcePos = v, w.pos(ke.val)
				}
			case "entity":
				w.textAt(ke, &l.Entity, &l.EntityPos)
			case "filter":
				w.textAt(ke, &l.Filter, &l.FilterPos)
			case "key":
				if target {
					set(&l.KeyField)(w.text(ke))
				} else {
					set(&l.Key)(w.expr(ke.val, fmt.Sprintf("\"key\" of %s", what)))
				}
			case "value":
				if target {
					set(&l.ValueField)(w.text(ke))
				} else {
					set(&l.Value)(w.expr(ke.val, fmt.Sprintf("\"value\" of %s", what)))
				}
			case "missing":
				set(&l.Missing)(w.choice(ke, "lookup"))
			}
		}
		p.Lookups = append(p.Lookups, l)
	}
}

// decodeMaps reads the value maps: maps: {units: {"יח'": EA, kg: KG}}.
// Each key is a source value as text (a number as written) and each value
// the target value it becomes.
func (w *walker) decodeMaps(p *Plan, e entry) {
	for _, me := range w.optEntries(e, "\"maps\"") {
		m := &ValueMap{Name: me.key, Pos: me.kpos}
		what := fmt.Sprintf("map %s", quote(me.key))
		w.checkName(me, "map")
		p.Maps = append(p.Maps, m) // even when wrong: its uses are not unknown
		mf, ok := w.mapping(me.val, what, nil)
		if !ok {
			continue
		}
		if fe, ok := mf.get("file"); ok && isMapFile(mf) {
			w.decodeMapFile(m, fe, what)
			if te, ok := mf.get("target"); ok {
				w.decodeMapTarget(m, te, what)
			}
			continue
		}
		if len(mf.entries) == 0 {
			w.errorf(w.pos(me.val), "%s is empty; give each source value and its target value (units: {kg: KG})", what)
		}
		for _, ve := range mf.entries {
			if ve.val.Kind != yaml.ScalarNode || isNull(ve.val) {
				w.errorf(w.pos(ve.val), "%s: the value %s must map to a target value in text (\"\" for empty), not %s", what, quote(ve.key), describe(ve.val))
				continue
			}
			m.Entries = append(m.Entries, MapEntry{Source: ve.key, Target: ve.val.Value, Pos: ve.kpos})
		}
	}
}

// isMapFile: a map whose keys are all of the file form's (file, target)
// is read from a file; any other is source value to target value.
func isMapFile(f *fields) bool {
	for _, e := range f.entries {
		if !slices.Contains(mapKeys, e.key) {
			return false
		}
	}
	return true
}

// decodeMapTarget reads target: {entity: FAMILY_LOG, key: FAMILYNAME}.
func (w *walker) decodeMapTarget(m *ValueMap, e entry, what string) {
	tw := fmt.Sprintf("\"target\" of %s", what)
	f, ok := w.mapping(e.val, tw, []string{"entity", "key"})
	if !ok {
		return
	}
	w.require(f, tw, "entity", "key")
	m.TargetPos = w.pos(e.val)
	if ee, ok := f.get("entity"); ok {
		m.TargetEntity, _ = w.text(ee)
	}
	if ke, ok := f.get("key"); ok {
		m.TargetKey, _ = w.text(ke)
	}
}

// decodeMapFile reads units: {file: mapping.xlsx}: a map whose values come
// from a mapping file (a .csv or .xlsx with columns map, source, target
// and confirmed), read where the plan is checked.
func (w *walker) decodeMapFile(m *ValueMap, e entry, what string) {
	v, ok := w.text(e)
	if !ok {
		return
	}
	ext := strings.ToLower(filepath.Ext(v))
	if ext != ".csv" && ext != ".xlsx" {
		w.errorf(w.pos(e.val), "\"file\" of %s must be a .csv or .xlsx mapping file (migrate mapping writes one), not %s", what, describe(e.val))
		return
	}
	m.File, m.FilePos = v, w.pos(e.val)
}

// connectionOf is a source's connection: as written, for messages.
func connectionOf(f *fields) string {
	if e, ok := f.get("connection"); ok && e.val.Kind == yaml.ScalarNode {
		return e.val.Value
	}
	return ""
}

// decodeConnections reads the services a plan reads besides its target
// (a template company, another installation). Their secrets come from the
// environment, never the plan.
func (w *walker) decodeConnections(p *Plan, e entry) {
	for _, ce := range w.optEntries(e, "\"connections\"") {
		c := &Connection{Name: ce.key, Pos: ce.kpos}
		what := fmt.Sprintf("connection %q", ce.key)
		if !connNameRE.MatchString(ce.key) {
			w.errorf(ce.kpos, "connection name %s may hold only letters, digits and \"_\", and starts with a letter (it names the MIGRATE_%s_* variables)", quote(ce.key), strings.ToUpper(ce.key))
			c.refused = true
		}
		cf, ok := w.mapping(ce.val, what, connKeys)
		if ok {
			w.require(cf, what, "url")
		}
		c.Spans = w.spans(cf)
		for _, ke := range cf.entries {
			switch ke.key {
			case "url":
				if v, ok := w.serviceURL(ke, odata.ConnectionPrefix(c.Name)); ok {
					c.URL = v
				} else {
					c.refused = true
				}
			case "auth":
				set(&c.Auth)(w.choice(ke, "connection"))
			case "token_url":
				set(&c.TokenURL)(w.tokenURL(ke))
			case "scopes":
				c.Scopes = w.scopes(ke, what)
			case "dialect":
				set(&c.Dialect)(w.choice(ke, "connection"))
			case "language":
				set(&c.Language)(w.bounds(ke, "connection", "\"language\" must be a language code of 1 or more (leave it out for none), not %d"))
			}
		}
		p.Connections = append(p.Connections, c)
	}
	w.connectionVariables(p.Connections)
}

// connectionVariables refuses connections that read a variable another
// connection or the target reads: t and T both read MIGRATE_T_TOKEN, and
// client would read the target's MIGRATE_CLIENT_AUTH as its MIGRATE_AUTH.
func (w *walker) connectionVariables(cs []*Connection) {
	reader := map[string]string{} // variable → who reads it
	for _, v := range odata.Variables {
		reader["MIGRATE_"+v] = "the target"
	}
	for _, c := range cs {
		if c.refused && !connNameRE.MatchString(c.Name) {
			continue
		}
		mine := map[string]bool{}
		for _, v := range odata.Variables {
			name := odata.ConnectionPrefix(c.Name) + v
			if who, ok := reader[name]; ok && !mine[name] {
				what := "the target's settings would be taken for its own; rename it"
				if who != "the target" {
					who, what = "connection "+quote(who), "one server's credentials would go to the other; rename one (names that differ only in case, or in where an \"_\" falls, share variables)"
				}
				w.errorf(c.Pos, "connection %s would read %s, which %s reads: %s", quote(c.Name), name, who, what)
				c.refused = true
				for _, o := range cs {
					if o.Name == reader[name] {
						o.refused = true
					}
				}
				break
			}
			reader[name], mine[name] = c.Name, true
		}
	}
}

// serviceURL reads a service's address: http(s), and never with a user
// name and password in it. env is the prefix of the variables that hold
// its secrets.
func (w *walker) serviceURL(e entry, env string) (string, bool) {
	return w.httpURL(e, "url",
		fmt.Sprintf("%sTOKEN, or %sUSER and %sPASSWORD", env, env, env),
		"an http:// or https:// address such as https://erp.example.com/odata/Priority/tabula.ini/demo")
}

// tokenURL is a token_url: an http(s) address without a user name and
// password (the client secret never goes in the plan).
func (w *walker) tokenURL(e entry) (string, bool) {
	return w.httpURL(e, "token_url",
		"MIGRATE_CLIENT_ID and MIGRATE_CLIENT_SECRET",
		"the token endpoint's http:// or https:// address, such as https://login.example.com/oauth2/token")
}

// httpURL reads the address under key: http(s) with a host, and never
// with a user name and password in it (secrets names the variables that
// hold them instead); want says what a good one is.
func (w *walker) httpURL(e entry, key, secrets, want string) (string, bool) {
	s, ok := w.text(e)
	if !ok {
		return "", false
	}
	u, err := url.Parse(s)
	switch {
	case odata.StripUserinfo(s) != s:
		// Never echoed: the value holds a password.
		w.errorf(w.pos(e.val), "%q carries a user name and password; secrets never go in the plan: remove them and set %s", key, secrets)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		w.errorf(w.pos(e.val), "%q must be %s, not %s", key, want, describe(e.val))
	default:
		return s, true
	}
	return "", false
}

// scopes are the scopes of a client credentials grant: a list, or one
// text of scopes separated by spaces.
func (w *walker) scopes(e entry, what string) []string {
	names, _ := w.names(e, what, "scopes")
	var out []string
	for _, n := range names {
		out = append(out, strings.Fields(n)...)
	}
	return out
}

// entityOf is a lookup's entity: as written, for messages.
func entityOf(f *fields) string {
	if e, ok := f.get("entity"); ok && e.val.Kind == yaml.ScalarNode {
		return e.val.Value
	}
	return ""
}

// names reads a list of names, or one name read as a list of one (after:
// parts is after: [parts]), with the position of each.
func (w *walker) names(e entry, what, kind string) ([]string, []Pos) {
	var out []string
	var pos []Pos
	if e.val.Kind == yaml.ScalarNode && !isNull(e.val) {
		if v, ok := w.text(e); ok {
			out, pos = append(out, v), append(pos, w.pos(e.val))
		}
		return out, pos
	}
	items, _ := w.sequence(e.val, fmt.Sprintf("%s of %s", quote(e.key), what))
	for _, it := range items {
		if it.Kind != yaml.ScalarNode || isNull(it) {
			w.errorf(w.pos(it), "%s of %s lists %s, not %s", quote(e.key), what, kind, describe(it))
			continue
		}
		out, pos = append(out, it.Value), append(pos, w.pos(it))
	}
	return out, pos
}

// stepWhat names a step in messages: by name when it has a valid one.
func stepWhat(f *fields, index int) string {
	if e, ok := f.get("name"); ok && e.val.Kind == yaml.ScalarNode && !isNull(e.val) && e.val.Value != "" {
		return fmt.Sprintf("step %s", quote(e.val.Value))
	}
	return fmt.Sprintf("step %d", index)
}

func (w *walker) decodeStep(n *yaml.Node, index int) *Step {
	s := &Step{Pos: w.pos(n), Mode: ModeInsert, DeepInsert: true}
	if n.Kind != yaml.MappingNode {
		w.errorf(w.pos(n), "step %d must be a mapping of keys (name, entity, source, fields), not %s", index, describe(n))
		return nil
	}
	what := stepWhat(w.probe(n), index)
	f := w.form(n, what, stepKeys, "step")
	s.Pos, s.Spans = f.pos, w.spans(f)
	for _, e := range f.entries {
		switch e.key {
		case "name":
			if v, ok := w.text(e); ok {
				s.Name, s.NamePos = v, w.pos(e.val)
				if !nameRE.MatchString(v) {
					w.errorf(w.pos(e.val), "step name %s may hold only letters, digits, \"_\" and \"-\"", quote(v))
				}
			}
		case "entity":
			if v, ok := w.text(e); ok {
				s.Entity, s.EntityPos = v, w.pos(e.val)
				if strings.TrimSpace(v) == "" {
					w.errorf(w.pos(e.val), "\"entity\" of %s is empty; name the entity set it loads, such as CUSTOMERS", what)
				}
			}
		case "source":
			w.textAt(e, &s.Source, &s.SourcePos)
		case "after":
			s.After, s.AfterPos = w.names(e, what, "step names")
		case "when":
			w.exprAt(e, what, &s.When)
		case "mode":
			if v, ok := w.choice(e, "step"); ok {
				s.Mode, s.ModePos = Mode(v), w.pos(e.val)
			}
		case "id":
			w.exprAt(e, what, &s.ID)
		case "group_by":
			w.exprAt(e, what, &s.GroupBy)
		case "match":
			s.Match, s.MatchPos = w.names(e, what, "field names")
		case "deep_insert":
			set(&s.DeepInsert)(w.boolean(e))
		case "totals":
			s.Totals = w.decodeTotals(e, what)
		default:
			w.formKey(e, what, &s.Fields, &s.Subforms, &s.Exists)
		}
	}
	w.needFields(f, len(s.Fields), len(s.Subforms), what)
	return s
}

// probe reads n's keys without checking them or reporting anything: a
// first pass that finds a step's or sub-form's name for messages.
func (w *walker) probe(n *yaml.Node) *fields {
	pf, _ := (&walker{file: w.file}).mapping(n, "", nil)
	return pf
}

// form reads the mapping of a step or sub-form (kind "step" or "subform"):
// its keys checked against allowed, a missing required key reported.
func (w *walker) form(n *yaml.Node, what string, allowed []string, kind string) *fields {
	f, _ := w.mapping(n, what, allowed)
	w.require(f, what, requiredKeys(kind)...)
	return f
}

// formKey reads a key that a step and a sub-form share (fields, subforms,
// exists) into its place.
func (w *walker) formKey(e entry, what string, fields *[]*Field, subforms *[]*Subform, exists *[]*Exists) {
	switch e.key {
	case "fields":
		*fields = w.decodeFields(e, what)
	case "subforms":
		*subforms = w.decodeSubforms(e, what)
	case "exists":
		*exists = w.decodeExists(e, what)
	}
}

// needFields reports a step or sub-form that writes nothing: at least one
// field, unless it only feeds sub-forms.
func (w *walker) needFields(f *fields, nFields, nSubforms int, what string) {
	if nFields > 0 || nSubforms > 0 || len(f.entries) == 0 {
		return
	}
	e, ok := f.get("fields")
	switch {
	case !ok:
		w.errorf(f.pos, "missing key \"fields\" in %s; map at least one field", what)
	case isNull(e.val) || e.val.Kind == yaml.MappingNode && len(e.val.Content) == 0:
		w.errorf(w.pos(e.val), "\"fields\" of %s is empty; map at least one field", what)
	}
}

func (w *walker) decodeFields(e entry, what string) []*Field {
	var out []*Field
	for _, fe := range w.namedEntries(e, fmt.Sprintf("\"fields\" of %s", what), fmt.Sprintf("a field name in %s is empty", what)) {
		if e.val.Style&yaml.FlowStyle != 0 && strings.ContainsAny(fe.key, "()\"' ") {
			// {A: ref("a", row.B)} splits at the comma into A and `row.B)`.
			w.errorf(fe.kpos, "%s looks like the rest of an expression, not a field name: inside {...} a comma ends a value; put the expression in single quotes", quote(fe.key))
			continue
		}
		x, ok := w.expr(fe.val, fmt.Sprintf("field %s of %s", quote(fe.key), what))
		if !ok {
			continue
		}
		out = append(out, &Field{Name: fe.key, Expr: x, Pos: fe.kpos})
	}
	return out
}

// decodeExists reads exists: {FIELD: ENTITY, ...}.
func (w *walker) decodeExists(e entry, what string) []*Exists {
	var out []*Exists
	block := fmt.Sprintf("\"exists\" of %s", what)
	for _, fe := range w.namedEntries(e, block, "a field name in "+block+" is empty") {
		if fe.val.Kind != yaml.ScalarNode || isNull(fe.val) || fe.val.Value == "" {
			w.errorf(w.pos(fe.val), "exists of %s: %s must name the entity its values are keys of (exists: {PARTNAME: LOGPART}), not %s", what, quote(fe.key), describe(fe.val))
			continue
		}
		out = append(out, &Exists{Field: fe.key, Entity: fe.val.Value, Pos: fe.kpos, EntityPos: w.pos(fe.val)})
	}
	return out
}

func (w *walker) decodeSubforms(e entry, parent string) []*Subform {
	items, _ := w.sequence(e.val, fmt.Sprintf("\"subforms\" of %s", parent))
	var out []*Subform
	for i, it := range items {
		if it.Kind != yaml.MappingNode {
			w.errorf(w.pos(it), "sub-form %d of %s must be a mapping of keys (name, fields), not %s", i+1, parent, describe(it))
			continue
		}
		what := fmt.Sprintf("sub-form %d of %s", i+1, parent)
		if ne, ok := w.probe(it).get("name"); ok && ne.val.Kind == yaml.ScalarNode && !isNull(ne.val) && ne.val.Value != "" {
			what = fmt.Sprintf("sub-form %s of %s", quote(ne.val.Value), parent)
		}
		sf := &Subform{Lines: LinesAppend}
		f := w.form(it, what, subformKeys, "subform")
		sf.Pos, sf.Spans = f.pos, w.spans(f)
		for _, e := range f.entries {
			switch e.key {
			case "name":
				w.textAt(e, &sf.Name, &sf.NamePos)
			case "source":
				if isNull(e.val) {
					// source: (empty) is the same as no source.
					sf.SourcePos = w.pos(e.val)
					break
				}
				w.textAt(e, &sf.Source, &sf.SourcePos)
			case "link":
				sf.linkWritten = true
				lw := fmt.Sprintf("\"link\" of %s", what)
				lf, ok := w.mapping(e.val, lw, linkKeys)
				if !ok {
					break
				}
				w.require(lf, lw, requiredKeys("link")...)
				l := &Link{Pos: e.kpos, Spans: w.spans(lf)}
				okP, okC := false, false
				if pe, ok := lf.get("parent"); ok {
					l.Parent, okP = w.expr(pe.val, fmt.Sprintf("\"parent\" of %s", lw))
				}
				if ce, ok := lf.get("child"); ok {
					l.Child, okC = w.expr(ce.val, fmt.Sprintf("\"child\" of %s", lw))
				}
				if okP && okC {
					sf.Link = l
				}
			case "each":
				w.exprAt(e, what, &sf.Each)
			case "when":
				w.exprAt(e, what, &sf.When)
			case "lines":
				if v, ok := w.choice(e, "subform"); ok {
					sf.Lines, sf.LinesPos = Lines(v), w.pos(e.val)
				}
			default:
				w.formKey(e, what, &sf.Fields, &sf.Subforms, &sf.Exists)
			}
		}
		w.needFields(f, len(sf.Fields), len(sf.Subforms), what)
		out = append(out, sf)
	}
	return out
}
