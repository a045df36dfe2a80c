package kineto

import (
	"io"
	"sync"
)

// asyncReader reads its source in a separate goroutine (used for gzip, so
// that inflating overlaps parsing) and hands over large chunks.
type asyncReader struct {
	full chan chunk
	free chan []byte
	done chan struct{}
	once sync.Once
	cur  []byte
	back []byte // buffer of cur, to recycle
	err  error
	wg   sync.WaitGroup
}

type chunk struct {
	b   []byte
	err error
}

const (
	asyncChunk = 4 << 20
	asyncDepth = 4
)

func newAsyncReader(src io.Reader) *asyncReader {
	a := &asyncReader{
		full: make(chan chunk, asyncDepth),
		free: make(chan []byte, asyncDepth+2),
		done: make(chan struct{}),
	}
	for i := 0; i < asyncDepth+1; i++ {
		a.free <- make([]byte, asyncChunk)
	}
	a.wg.Add(1)
	go a.run(src)
	return a
}

func (a *asyncReader) run(src io.Reader) {
	defer a.wg.Done()
	defer close(a.full)
	for {
		var buf []byte
		select {
		case buf = <-a.free:
		case <-a.done:
			return
		}
		// Fill buf, passing on the source's own error as it is: a gzip
		// member cut before its trailer ends in io.ErrUnexpectedEOF, which
		// must not pass for the end of the input (io.ReadFull would say
		// the same for a short last chunk).
		n, err := 0, error(nil)
		for n < len(buf) && err == nil {
			var m int
			m, err = src.Read(buf[n:])
			n += m
		}
		if n > 0 || err != nil {
			select {
			case a.full <- chunk{b: buf[:n], err: err}:
			case <-a.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (a *asyncReader) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		if a.back != nil {
			a.free <- a.back[:cap(a.back)]
			a.back = nil
		}
		c, ok := <-a.full
		if !ok {
			a.err = io.EOF
			return 0, io.EOF
		}
		a.cur, a.back, a.err = c.b, c.b, c.err
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// Close stops the reading goroutine, waits for it and lets its buffers go
// (20 MiB: the parser calls it before joining the tables, the import's
// peak). Reads after Close return io.EOF or the error already met.
func (a *asyncReader) Close() error {
	a.once.Do(func() {
		close(a.done)
		a.wg.Wait()
		for range a.full {
		}
		for len(a.free) > 0 {
			<-a.free
		}
		a.cur, a.back = nil, nil // later reads find full closed: io.EOF
	})
	return nil
}
