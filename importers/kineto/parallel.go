package kineto

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// This file pipelines the traceEvents parse across cores. The sequential
// loop in events stays the reference: it parses small inputs, the start of
// every input, and every place the pipeline is not sure about; the pipeline
// only ever hands it back a reader positioned at the start of an element,
// holding every byte not yet handled, so that errors, warnings, interning
// order and ids are exactly those of the sequential parse.
//
// Pipeline: the calling goroutine (the sequencer) reads the stream in
// batches cut at a likely event boundary ("}" "," "{" with spaces between),
// hands each batch to a worker that runs parseEvent on its events (pure:
// the events point into the batch's buffer), and applies handle to the
// batches strictly in stream order. A worker stops at the first element it
// cannot take whole: not an object, a syntax error, the array's end, or an
// event cut by the batch's end (a wrong guess of the boundary). Batch k+1's
// start is trusted only when batch k ended cleanly (its last event followed
// by ',' at the batch's end), so a wrong guess is always caught; at a stop,
// the sequencer handles the events before it, cancels the pipeline and
// rewinds the reader to the stopping element for the sequential loop.

// parCfg sets the pipeline up; tests shrink it to run the pipeline on small
// inputs.
type parCfg struct {
	min      int64 // bytes of events parsed sequentially before the pipeline starts; < 0: never
	batch    int   // target batch size in bytes
	workers  int
	inflight int // batches read and not yet handled
}

func defaultPar() parCfg {
	w := runtime.GOMAXPROCS(0)
	if w < 2 {
		return parCfg{min: -1}
	}
	// handle, on one goroutine, costs about half of what parseEvent does:
	// more than a few workers would only hold more batches in memory.
	w = min(w, 4)
	return parCfg{min: 8 << 20, batch: 512 << 10, workers: w, inflight: 3*w + 2}
}

func (c parCfg) enabled() bool { return c.min >= 0 && c.workers > 0 && c.batch > 0 && c.inflight >= 2 }

// batch is a run of whole traceEvents elements: buf is owned by the batch
// and starts at an element start (or spaces before one).
type batch struct {
	buf    []byte
	base   int64 // stream offset of buf[0]
	evs    []event
	offs   []int    // offset in buf of each event in evs
	stop   int      // offset in buf of the element the sequential loop must resume at; -1: ended cleanly
	chunks [][]byte // scratch space for unescaped strings
	done   chan struct{}
}

// pipelineBatches and pipelineRewinds count, for tests, the batches the
// pipeline handled and the times it handed back to the sequential loop.
var pipelineBatches, pipelineRewinds atomic.Int64

const (
	// maxBatchEvents bounds a batch's parsed events (640 bytes each); the
	// batch size follows the bytes per event so that it is rarely reached
	// (a batch that reaches it goes back to the sequential loop).
	maxBatchEvents = 8192
	eventsPerBatch = 4096
	minBatch       = 8 << 10

	scratchChunk = 64 << 10
	scratchLow   = 1 << 10
)

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// runBatch runs parseBatch; should it panic, the batch is handed back whole
// to the sequential loop, which meets the panic on the caller's goroutine
// as before the pipeline existed.
func runBatch(b *batch, wp *eventParser, stop *atomic.Bool) {
	defer func() {
		if recover() != nil {
			b.evs, b.offs, b.stop = b.evs[:0], b.offs[:0], 0
		}
	}()
	parseBatch(b, wp, stop)
}

// parseBatch parses b's events with wp (used only for its scratch space).
func parseBatch(b *batch, wp *eventParser, stop *atomic.Bool) {
	buf := b.buf
	n := len(buf)
	b.evs = b.evs[:0]
	b.offs = b.offs[:0]
	b.stop = -1
	// Unescaped strings of this batch's events live in its scratch chunks,
	// reused once the batch is handled.
	wp.scratch = nil
	nChunk := 0
	pos := 0
	for {
		if cap(wp.scratch)-len(wp.scratch) < scratchLow {
			if nChunk == len(b.chunks) {
				b.chunks = append(b.chunks, make([]byte, 0, max(4*scratchLow, min(scratchChunk, n))))
			}
			wp.scratch = b.chunks[nChunk][:0]
			nChunk++
		}
		elem := pos
		for pos < n && isWS(buf[pos]) {
			pos++
		}
		if pos >= n {
			return
		}
		if buf[pos] != '{' || len(b.evs) >= maxBatchEvents || (len(b.evs)&1023 == 0 && stop.Load()) {
			b.stop = elem
			return
		}
		if len(b.evs) < cap(b.evs) {
			b.evs = b.evs[:len(b.evs)+1] // parseEvent clears it
		} else {
			b.evs = append(b.evs, event{})
		}
		ev := &b.evs[len(b.evs)-1]
		c := cur{b: buf[pos:], off: b.base + int64(pos)}
		err := wp.parseEvent(&c, ev)
		// Keep this event's unescaped strings: the next parseEvent resets
		// the scratch to its start.
		wp.scratch = wp.scratch[len(wp.scratch):]
		q := pos + c.i
		for q < n && isWS(buf[q]) {
			q++
		}
		if err != nil || q >= n || buf[q] != ',' {
			b.evs = b.evs[:len(b.evs)-1]
			b.stop = elem
			return
		}
		b.offs = append(b.offs, pos)
		pos = q + 1
	}
}

// findCut returns the offset just after the ',' of the last "}" "," "{"
// (spaces allowed between) in b[lo:], or -1.
func findCut(b []byte, lo int) int {
	end := len(b)
	for end > lo {
		i := bytes.LastIndexByte(b[lo:end], '{')
		if i < 0 {
			return -1
		}
		i += lo
		j := i - 1
		for j >= lo && isWS(b[j]) {
			j--
		}
		if j >= lo && b[j] == ',' {
			k := j - 1
			for k >= lo && isWS(b[k]) {
				k--
			}
			if k >= lo && b[k] == '}' {
				return j + 1
			}
		}
		end = i
	}
	return -1
}

// parallelEvents runs the pipeline from r, which is at the start of a
// traceEvents element. It returns nil with r rewound to the start of the
// first element it did not handle, or the context's error.
//
// bpe is the mean size in bytes of the elements read so far; it sets the
// batch size (eventsPerBatch elements, at most cfg.batch bytes).
//
// It is one long function on purpose: fill and rewind are closures over
// the pipeline's state (carry, next, the stream and its end, the batch
// queue), which is local to one run of the pipeline.
func (d *decoder) parallelEvents(r *reader, bpe int64) (err error) {
	cfg := d.par
	work := make(chan *batch, cfg.inflight)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < cfg.workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wp := &eventParser{}
			for b := range work {
				runBatch(b, wp, &stop)
				b.done <- struct{}{}
			}
		}()
	}
	defer func() {
		stop.Store(true)
		close(work)
		wg.Wait()
	}()

	// Bytes read from the stream but not yet in a batch: at first what r
	// holds, later the tail after a batch's cut.
	// (carry starts as a view of r's buffer, which is ours until rewind
	// replaces it.)
	carry := r.buf[r.pos:r.end]
	next := r.offset(0) // stream offset of carry[0]
	src, eof, rerr := r.r, r.eof, r.rerr
	var queue, free []*batch
	bufCap := cfg.batch + cfg.batch/4 + 4096

	// rewind hands the sequential loop every byte from stream offset off
	// on: s (a batch's tail), the later batches, carry, then the stream.
	rewind := func(s []byte, off int64, later []*batch) {
		stop.Store(true)
		pipelineRewinds.Add(1)
		total := len(s) + len(carry)
		for _, b := range later {
			total += len(b.buf)
		}
		nb := make([]byte, 0, total+4096)
		nb = append(nb, s...)
		for _, b := range later {
			nb = append(nb, b.buf...)
		}
		nb = append(nb, carry...)
		r.buf = nb[:cap(nb)]
		r.pos, r.end, r.base = 0, len(nb), off
		r.eof, r.rerr = eof, rerr
	}

	target := func() int {
		lo := min(cfg.batch, minBatch)
		return max(lo, int(min(int64(cfg.batch), bpe*eventsPerBatch)))
	}
	fill := func() *batch {
		var b *batch
		if n := len(free); n > 0 {
			b, free = free[n-1], free[:n-1]
		} else {
			b = &batch{done: make(chan struct{}, 1)}
		}
		want := target()
		// A long carry (what r held) is cut into batches first.
		take := len(carry)
		if take > want {
			if c := findCut(carry[:want], want/2); c >= 0 {
				take = c
			}
		}
		if cap(b.buf) < max(bufCap, take+4096) {
			b.buf = make([]byte, 0, max(bufCap, take+bufCap))
		}
		b.buf = append(b.buf[:0], carry[:take]...)
		carry = carry[take:]
		b.base = next
		if len(carry) > 0 {
			next += int64(take)
			return b
		}
		for {
			for len(b.buf) < want && !eof {
				if len(b.buf) == cap(b.buf) {
					nb := make([]byte, len(b.buf), 2*cap(b.buf))
					copy(nb, b.buf)
					b.buf = nb
				}
				lim := min(cap(b.buf), len(b.buf)+max(want-len(b.buf), 4096))
				n, err := src.Read(b.buf[len(b.buf):lim])
				b.buf = b.buf[:len(b.buf)+n]
				if err != nil {
					eof = true
					if err != io.EOF {
						rerr = err
					}
				}
			}
			if eof {
				carry = carry[:0]
				break
			}
			if cut := findCut(b.buf, len(b.buf)/2); cut >= 0 {
				carry = append(carry[:0], b.buf[cut:]...)
				b.buf = b.buf[:cut]
				break
			}
			if len(b.buf) >= 8*target() {
				// No boundary found: send it whole; the worker stops at
				// the cut event and the sequential loop takes over.
				carry = carry[:0]
				break
			}
			want = 2 * len(b.buf)
		}
		next = b.base + int64(len(b.buf))
		return b
	}

	for {
		if d.ctx != nil {
			if err := d.ctx.Err(); err != nil {
				return err
			}
		}
		for len(queue) < cfg.inflight && !(eof && len(carry) == 0) {
			b := fill()
			queue = append(queue, b)
			work <- b
		}
		if len(queue) == 0 {
			rewind(nil, next, nil)
			return nil
		}
		h := queue[0]
		<-h.done
		pipelineBatches.Add(1)
		for i := range h.evs {
			idx := d.nEvents
			d.nEvents++
			d.b.handle(&h.evs[i], idx, h.base+int64(h.offs[i]))
		}
		if h.stop >= 0 {
			rewind(h.buf[h.stop:], h.base+int64(h.stop), queue[1:])
			return nil
		}
		if len(h.evs) > 0 {
			bpe = max(1, int64(len(h.buf)/len(h.evs)))
		}
		queue = queue[1:]
		free = append(free, h)
	}
}
