package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"strconv"
)

// Chain is what CheckChain found of a journal's hash chain.
type Chain struct {
	// Chained: the header says the lines are chained; a journal written
	// before the chain is not, and its lines are only counted.
	Chained bool `json:"chained"`
	// Lines is the whole lines read; a torn last line (a crash while it
	// was written, cut off by the next run) is not one of them.
	Lines int `json:"lines"`
	// Head is the hex SHA-256 of the last whole line: what the next line
	// chains from, and what pins the journal as a whole (an edit of the
	// last line, or lines cut off the end, leave the chain whole but
	// change its head).
	Head string `json:"head"`
	// Breaks are the places where the chain does not hold, in line order.
	Breaks []Break `json:"breaks,omitempty"`
}

// Intact reports whether the journal is chained and its chain holds.
func (c *Chain) Intact() bool { return c.Chained && len(c.Breaks) == 0 }

// Break is one place where the chain does not hold: the line (1-based, as
// the file holds it now) and what happened to it.
type Break struct {
	Line    int    `json:"line"`
	Problem string `json:"problem"`
}

func (b Break) String() string { return fmt.Sprintf("line %d: %s", b.Line, b.Problem) }

// CheckChainFile is CheckChain of the journal at path.
func CheckChainFile(path string) (*Chain, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return CheckChain(f)
}

// seen is a chained line: where it stands now and its hash.
type seen struct {
	line    int
	hash    [sha256.Size]byte
	damaged bool // its checksum fails: it is reported, not linked to
}

// chainWindow is how many line numbers back a link is looked for: lines
// moved further than that are told as removed and inserted.
const chainWindow = 4096

// CheckChain reads a journal line by line and checks its hash chain: each
// line after the header must carry its number as written and the hash of
// the line written before it. A line changed after it was written breaks
// the link of the line after it; a line removed leaves its number missing;
// a line inserted has no link, or a number already taken; a line moved
// stands where its number does not. Each break names the line as the file
// holds it now. A damaged line (its checksum) is a break too; a torn last
// line is not (a crash leaves it, the next run cuts it off).
func CheckChain(r io.Reader) (*Chain, error) {
	lr := newLineReader(r)
	c := &Chain{}
	var (
		bySeq   = map[int]seen{} // the chained lines of the window, by number
		missing = map[int]bool{} // numbers skipped, not (yet) seen
		wanted  = map[int]wantLink{}
		last    int // the highest number seen
		head    [sha256.Size]byte
	)
	for lineNo := 1; ; lineNo++ {
		line, err := lr.next()
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(line) == 0 || line[len(line)-1] != '\n' {
			break // the end, or a torn last line
		}
		line = line[:len(line)-1]
		h := sha256.Sum256(line)
		c.Lines, head = lineNo, h
		js, ok := lineJSON(line)
		if lineNo == 1 {
			var e Entry
			if !ok || decodeLine(js, &e) != nil || e.Kind != KindHeader || e.Header == nil {
				return nil, &CorruptError{Line: 1, Reason: "the first line is not a journal header"}
			}
			c.Chained, last = e.Header.Chained, 1
			bySeq[1] = seen{line: 1, hash: h}
			continue
		}
		if !c.Chained {
			continue // written before the chain: its lines are counted, not checked
		}
		brk := func(format string, args ...any) {
			c.Breaks = append(c.Breaks, Break{Line: lineNo, Problem: fmt.Sprintf(format, args...)})
		}
		damaged := !ok
		if damaged {
			brk("damaged: its checksum does not match its content (changed by hand?)")
			if len(line) < 10 {
				continue
			}
			js = line[9:]
		}
		seq, prev, ok := chainLink(js)
		if damaged && !ok {
			continue
		}
		if !ok {
			brk("carries no chain link: it was not written by migrate's journal (inserted, or rewritten whole)")
			continue
		}
		// Where it stands.
		switch {
		case seq == last+1:
		case missing[seq]:
			delete(missing, seq)
			brk("moved: it was written as line %d, before the line now at %d", seq, after(bySeq, seq))
		case seq <= last:
			if s, dup := bySeq[seq]; dup {
				brk("repeats line number %d, which line %d has: one of them was inserted", seq, s.line)
			} else {
				brk("written as line %d: it was moved here, or copied from elsewhere", seq)
			}
		default: // seq > last+1: the numbers between are missing here
			for n := last + 1; n < seq; n++ {
				missing[n] = true
			}
		}
		if damaged {
			if _, dup := bySeq[seq]; !dup {
				bySeq[seq] = seen{line: lineNo, damaged: true}
			}
			last = max(last, seq)
			continue
		}
		// What it chains from.
		if p, ok := bySeq[seq-1]; ok {
			if !p.damaged && hex.EncodeToString(p.hash[:]) != prev {
				c.Breaks = append(c.Breaks, Break{Line: p.line, Problem: fmt.Sprintf("changed after it was written: line %d, written after it, chains from other content", lineNo)})
			}
		} else if seq-1 > last-chainWindow {
			wanted[seq-1] = wantLink{lineNo, prev}
		}
		if w, ok := wanted[seq]; ok {
			delete(wanted, seq)
			if hex.EncodeToString(h[:]) != w.prev {
				brk("changed after it was written: line %d, written after it, chains from other content", w.line)
			}
		}
		if _, dup := bySeq[seq]; !dup {
			bySeq[seq] = seen{line: lineNo, hash: h}
		}
		last = max(last, seq)
		if len(bySeq) > 2*chainWindow {
			for n := range bySeq {
				if n < last-chainWindow {
					delete(bySeq, n)
				}
			}
		}
	}
	c.Head = hex.EncodeToString(head[:])
	if c.Lines == 0 {
		return nil, &CorruptError{Line: 1, Reason: "empty journal: no header"}
	}
	// Numbers never seen: those lines are gone.
	gone := make([]int, 0, len(missing))
	for n := range missing {
		gone = append(gone, n)
	}
	slices.Sort(gone)
	for _, n := range gone {
		at := after(bySeq, n)
		c.Breaks = append(c.Breaks, Break{Line: at, Problem: fmt.Sprintf("the line before it, written as line %d, was removed", n)})
	}
	slices.SortStableFunc(c.Breaks, func(a, b Break) int { return a.Line - b.Line })
	return c, nil
}

type wantLink struct {
	line int
	prev string
}

// after is the line that now holds the first number above seq: where a
// line numbered seq would stand.
func after(bySeq map[int]seen, seq int) int {
	best, at := 0, 0
	for n, s := range bySeq {
		if n > seq && (best == 0 || n < best) {
			best, at = n, s.line
		}
	}
	return at
}

// lineJSON is a line's JSON when its checksum holds.
func lineJSON(line []byte) ([]byte, bool) {
	if len(line) < 10 || line[8] != ' ' {
		return nil, false
	}
	want, err := strconv.ParseUint(string(line[:8]), 16, 32)
	if err != nil || uint32(want) != crc32.Checksum(line[9:], castagnoli) {
		return nil, false
	}
	return line[9:], true
}

// chainLink reads a line's number and link, which the writer puts first:
// {"seq":N,"prev":"hex",...
func chainLink(js []byte) (int, string, bool) {
	const a, b = `{"seq":`, `,"prev":"`
	if !bytes.HasPrefix(js, []byte(a)) {
		return 0, "", false
	}
	rest := js[len(a):]
	i := bytes.IndexByte(rest, ',')
	if i <= 0 {
		return 0, "", false
	}
	seq, err := strconv.Atoi(string(rest[:i]))
	if err != nil || seq < 2 || !bytes.HasPrefix(rest[i:], []byte(b)) {
		return 0, "", false
	}
	rest = rest[i+len(b):]
	if len(rest) < 2*sha256.Size+1 || rest[2*sha256.Size] != '"' || !isHex(rest[:2*sha256.Size]) {
		return 0, "", false
	}
	return seq, string(rest[:2*sha256.Size]), true
}
