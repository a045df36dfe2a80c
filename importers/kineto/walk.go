package kineto

import (
	"bytes"
	"context"
)

// The raw layer: the JSON walk over the top level and the traceEvents
// array (this file), the typed event as read (event.go) and the byte
// scanner under both (scan.go). It knows nothing of the model: header keys
// go to header.go, each event to the builder (build.go). FuzzEvent drives
// parseEvent alone; FuzzBuild drives the builder with typed events and no
// JSON at all.

// decoder walks one document.
type decoder struct {
	b       *builder
	ctx     context.Context
	evp     eventParser
	ev      event // reused by the sequential loop
	nEvents int
	par     parCfg
}

// top reads the top-level value: an object with a traceEvents array, or a
// bare array of events. Any other JSON value is not a Kineto trace.
func (d *decoder) top(r *reader) error {
	c, ok := r.peek()
	if !ok {
		if r.rerr != nil {
			return r.eofErr()
		}
		return &syntaxError{off: 0, msg: "empty input"}
	}
	if c == 0xEF { // UTF-8 BOM
		if r.end-r.pos >= 3 && bytes.HasPrefix(r.buf[r.pos:r.end], []byte("\xef\xbb\xbf")) {
			r.pos += 3
			c, ok = r.peek()
			if !ok {
				return &syntaxError{off: 3, msg: "empty input"}
			}
		}
	}
	switch c {
	case '[':
		if err := d.events(r); err != nil {
			return err
		}
	case '{':
		if err := d.object(r); err != nil {
			return err
		}
	case 'n', 't', 'f', '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return r.errAt(0, "not a Kineto trace: the top-level value is a JSON scalar, not an object with traceEvents or an array of events")
	default:
		return r.errAt(0, "not JSON: expected '{' or '[' at the top level, found %q", c)
	}
	if r.ws() {
		return r.errAt(0, "unexpected data after the top-level value")
	}
	if r.rerr != nil {
		return r.eofErr()
	}
	return nil
}

func (d *decoder) object(r *reader) error {
	r.pos++ // '{'
	c, ok := r.peek()
	if !ok {
		return r.eofErr()
	}
	if c == '}' {
		return r.errAt(0, "not a Kineto trace: the top-level object has no traceEvents array")
	}
	sawEvents := false
	for {
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		if c != '"' {
			return r.errAt(0, "expected a key string, found %q", c)
		}
		n, err := r.extent()
		if err != nil {
			return err
		}
		kc := cur{b: r.buf[r.pos : r.pos+n], off: r.offset(0)}
		kraw, esc, err := kc.str()
		if err != nil {
			return err
		}
		key := string(kraw)
		if esc {
			key = string(unescape(nil, kraw))
		}
		r.pos += n
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		if c != ':' {
			return r.errAt(0, "expected ':' after key %q, found %q", key, c)
		}
		r.pos++
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		if key == "traceEvents" {
			if c != '[' {
				return r.errAt(0, "not a Kineto trace: traceEvents is not an array (found %q)", c)
			}
			if err := d.events(r); err != nil {
				return err
			}
			sawEvents = true
		} else {
			n, err := r.extent()
			if err != nil {
				return err
			}
			vc := cur{b: r.buf[r.pos : r.pos+n], off: r.offset(0)}
			if err := d.b.header(key, &vc); err != nil {
				return err
			}
			r.pos += n
		}
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		switch c {
		case ',':
			r.pos++
		case '}':
			if !sawEvents {
				return r.errAt(0, "not a Kineto trace: the top-level object has no traceEvents array")
			}
			r.pos++
			return nil
		default:
			return r.errAt(0, "expected ',' or '}' after a top-level value, found %q", c)
		}
	}
}

// events reads the traceEvents array (r at '[').
func (d *decoder) events(r *reader) error {
	r.pos++
	c, ok := r.peek()
	if !ok {
		return r.eofErr()
	}
	if c == ']' {
		r.pos++
		return nil
	}
	// seqFrom is where the sequential loop took over; the pipeline starts
	// once it has read d.par.min bytes of events from there.
	seqFrom, seqEvents := r.offset(0), d.nEvents
	par := d.par.enabled()
	seqMin := d.par.min
	for {
		// (At least one element between two runs of the pipeline: it
		// hands back at the element it could not take.)
		if par && r.offset(0)-seqFrom >= seqMin && d.nEvents > seqEvents {
			bpe := (r.offset(0) - seqFrom) / int64(max(1, d.nEvents-seqEvents))
			if err := d.parallelEvents(r, bpe); err != nil {
				return err
			}
			seqFrom, seqEvents = r.offset(0), d.nEvents
			// After a hand-back, read at least what the pipeline held
			// before starting it again (each start copies that much).
			seqMin = max(d.par.min, 2*int64(d.par.batch)*int64(d.par.inflight))
		}
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		start := r.offset(0)
		idx := d.nEvents
		d.nEvents++
		var n int
		if c == '{' {
			// Parse straight from the buffer; an event cut by the buffer's
			// end fails near that end, and is parsed again after a refill.
			for {
				cc := cur{b: r.buf[r.pos:r.end], off: start}
				err := d.evp.parseEvent(&cc, &d.ev)
				if err == nil {
					n = cc.i
					break
				}
				if cc.i+8 >= len(cc.b) {
					// Read at least as much again (64 KiB or more), so that
					// tiny reads cannot make re-parsing quadratic.
					if r.fillAtLeast(max(len(cc.b), 64<<10)) {
						continue
					}
					if cc.i >= len(cc.b) {
						return r.eofErr()
					}
				}
				return err
			}
			d.b.handle(&d.ev, idx, start)
		} else {
			var err error
			if n, err = r.extent(); err != nil {
				return err
			}
			cc := cur{b: r.buf[r.pos : r.pos+n], off: start}
			if err := cc.skip(); err != nil {
				return err
			}
			if cc.i != len(cc.b) {
				return cc.fail("unexpected data after value")
			}
			d.b.warn(idx, start, "not an object; skipped")
		}
		r.pos += n
		if idx%eventsPerCtxCheck == 0 && d.ctx != nil {
			if err := d.ctx.Err(); err != nil {
				return err
			}
		}
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		switch c {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return nil
		default:
			return r.errAt(0, "expected ',' or ']' in traceEvents, found %q", c)
		}
	}
}
