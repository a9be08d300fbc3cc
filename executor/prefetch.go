package executor

import (
	"errors"

	"github.com/migrate-tool/migrate/plan"
	"github.com/migrate-tool/migrate/source"
	"github.com/migrate-tool/migrate/transform"
)

// prefetchChunk is how many rows the reading goroutine hands over at once;
// at most two chunks wait, so memory stays flat whatever the file's size.
const prefetchChunk = 128

// prefetch wraps an Opener so that every workbook is read ahead by a
// goroutine of its own while the caller transforms and packs: on two cores
// the reading (inflating and parsing XML: half of the dry run's time over
// XLSX) overlaps the rest. Rows are independent values (a reader allocates
// each row's cells), so handing them across goroutines is safe. CSV is
// left alone: its reading is a tenth of the time, less than the handing
// over costs (measured in bench/).
func prefetch(open transform.Opener) transform.Opener {
	if open == nil {
		return nil
	}
	return func(src *plan.Source) (source.Reader, error) {
		rd, err := open(src)
		if err != nil {
			return nil, err
		}
		if source.IsWorkbook(src.File) {
			return &prefetchReader{inner: rd, header: rd.Header()}, nil
		}
		return rd, nil
	}
}

type prefetched struct {
	row source.Row
	err error
}

// prefetchReader is a source.Reader whose Next takes rows that a goroutine,
// started by the first Next, has already read. It keeps the inner
// reader's semantics: row-only errors come with their rows, the first other
// error (io.EOF included) ends the stream and is returned from then on.
type prefetchReader struct {
	inner  source.Reader
	header *source.Header

	ch      chan []prefetched
	stop    chan struct{}
	done    chan struct{}
	last    error // the error that ended the stream; read once ch is closed
	started bool
	closed  bool
	buf     []prefetched
	end     error // last, once seen by Next
}

func (r *prefetchReader) Header() *source.Header { return r.header }

func (r *prefetchReader) Next() (source.Row, error) {
	if r.closed {
		return source.Row{}, source.ErrClosed
	}
	if !r.started {
		r.started = true
		r.ch = make(chan []prefetched, 1)
		r.stop = make(chan struct{})
		r.done = make(chan struct{})
		go r.read()
	}
	for len(r.buf) == 0 {
		if r.end != nil {
			return source.Row{}, r.end
		}
		chunk, ok := <-r.ch
		if !ok {
			r.end = r.last
			continue
		}
		r.buf = chunk
	}
	it := r.buf[0]
	r.buf = r.buf[1:]
	return it.row, it.err
}

// read runs in its own goroutine until the stream ends or Close stops it.
func (r *prefetchReader) read() {
	defer close(r.done)
	defer close(r.ch)
	for {
		chunk := make([]prefetched, 0, prefetchChunk)
		var final error
		for len(chunk) < prefetchChunk {
			row, err := r.inner.Next()
			if err != nil && !rowOnly(err) {
				final = err
				break
			}
			chunk = append(chunk, prefetched{row, err})
		}
		if len(chunk) > 0 {
			select {
			case r.ch <- chunk:
			case <-r.stop:
				return
			}
		}
		if final != nil {
			r.last = final
			return
		}
	}
}

func rowOnly(err error) bool {
	var se *source.Error
	return errors.As(err, &se) && se.RowOnly
}

// Close stops the reading goroutine, then closes the inner reader.
func (r *prefetchReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if r.started {
		close(r.stop)
		<-r.done
	}
	return r.inner.Close()
}
