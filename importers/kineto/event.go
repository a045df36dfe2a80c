package kineto

// laneVal is a pid or tid as written: an int, a string, or absent.
type laneVal struct {
	kind uint8 // lnNone, lnInt, lnStr
	n    int64
	s    []byte
}

const (
	lnNone uint8 = iota
	lnInt
	lnStr
	lnBad // a JSON type other than int, string or null
)

// args holds the args keys the importer uses; the rest are skipped.
type args struct {
	corr, ext, device, stream, streamID       int64
	hasCorr, hasExt, hasDevice, hasStream     bool
	hasStreamID                               bool
	grid, block                               [3]int32
	hasGrid, hasBlock                         bool
	regs, smem                                int64
	bytes                                     int64
	hasBytes                                  bool
	kind                                      []byte
	graphID                                   int64
	collName, dtype, pgName                   []byte
	hasCollName, hasPGName                    bool
	nelems, groupSize, pgID, rank             int64
	hasNelems, hasGroupSize, hasPGID, hasRank bool
	collSeq                                   int64
	hasCollSeq                                bool
	syncKind                                  []byte
	devType, devID                            int64
	hasDevType, hasDevID                      bool
	memBytes                                  int64
	hasMemBytes                               bool
	addr                                      int64
	totalAlloc, totalRes                      int64
	hasTotalAlloc, hasTotalRes                bool
	mName                                     []byte
	hasMName                                  bool
	// inDims and inTypes are the raw JSON of "Input Dims" / "Input type"
	// (record_shapes), decoded only for the operators model.ShapedOp names.
	inDims, inTypes []byte
}

// event is one traceEvents record, as far as it is read.
type event struct {
	ph       byte
	phLen    int
	cat      []byte
	hasCat   bool
	name     []byte
	hasName  bool
	pid, tid laneVal
	ts, dur  []byte
	tsStr    bool
	durStr   bool
	id       int64
	hasID    bool
	badType  string // first field with a wrong JSON type
	a        args
}

// eventParser turns the text of one event into an event. Its only state is
// scratch space for unescaped strings, so each pipeline worker has its own.
type eventParser struct {
	scratch []byte
}

// parseEvent reads one event object from c. Grammar errors are returned
// (fatal); wrong types are noted in ev.badType (a spoiled record).
func (p *eventParser) parseEvent(c *cur, ev *event) error {
	*ev = event{}
	ev.a.totalAlloc, ev.a.totalRes = -1, -1
	p.scratch = p.scratch[:0]
	if err := c.expect('{'); err != nil {
		return err
	}
	if c.next() == '}' {
		c.i++
		return nil
	}
	for {
		key, _, err := c.str()
		if err != nil {
			return err
		}
		if err := c.expect(':'); err != nil {
			return err
		}
		switch string(key) {
		case "ph":
			s, ok, err := p.strVal(c)
			if err != nil {
				return err
			}
			if !ok || len(s) == 0 {
				ev.bad("ph")
			} else {
				ev.ph, ev.phLen = s[0], len(s)
			}
		case "cat":
			s, ok, err := p.strVal(c)
			if err != nil {
				return err
			}
			if ok {
				ev.cat, ev.hasCat = s, true
			} else {
				ev.bad("cat")
			}
		case "name":
			s, ok, err := p.strVal(c)
			if err != nil {
				return err
			}
			if ok {
				ev.name, ev.hasName = s, true
			} else {
				ev.bad("name")
			}
		case "pid":
			if err := p.lane(c, &ev.pid); err != nil {
				return err
			}
			if ev.pid.kind == lnBad {
				ev.bad("pid")
			}
		case "tid":
			if err := p.lane(c, &ev.tid); err != nil {
				return err
			}
			if ev.tid.kind == lnBad {
				ev.bad("tid")
			}
		case "ts":
			b, str, err := p.numText(c)
			if err != nil {
				return err
			}
			ev.ts, ev.tsStr = b, str
		case "dur":
			b, str, err := p.numText(c)
			if err != nil {
				return err
			}
			ev.dur, ev.durStr = b, str
		case "id":
			v, ok, err := p.intVal(c)
			if err != nil {
				return err
			}
			ev.id, ev.hasID = v, ok
		case "args":
			if c.next() == '{' {
				if err := p.parseArgs(c, &ev.a); err != nil {
					return err
				}
			} else if err := c.skip(); err != nil {
				return err
			}
		default:
			if err := c.skip(); err != nil {
				return err
			}
		}
		switch c.next() {
		case ',':
			c.i++
		case '}':
			c.i++
			return nil
		default:
			return c.fail("expected ',' or '}' in event")
		}
	}
}

func (ev *event) bad(field string) {
	if ev.badType == "" {
		ev.badType = field
	}
}

// strVal reads a string value (unescaped into p.scratch when needed); ok is
// false, with the value skipped, when it is not a string.
func (p *eventParser) strVal(c *cur) ([]byte, bool, error) {
	if c.next() != '"' {
		return nil, false, c.skip()
	}
	raw, esc, err := c.str()
	if err != nil {
		return nil, false, err
	}
	if esc {
		n := len(p.scratch)
		p.scratch = unescape(p.scratch, raw)
		return p.scratch[n:len(p.scratch):len(p.scratch)], true, nil
	}
	return raw, true, nil
}

// textVal reads a string or a number as text (e.g. a process group name
// written either way).
func (p *eventParser) textVal(c *cur) ([]byte, bool, error) {
	switch ch := c.next(); {
	case ch == '"':
		return p.strVal(c)
	case ch == '-' || (ch >= '0' && ch <= '9'):
		b, err := c.number()
		return b, err == nil, err
	}
	return nil, false, c.skip()
}

// intVal reads an int from a number (fraction truncated) or from a string
// holding one (HIP args); ok is false for null and other types.
func (p *eventParser) intVal(c *cur) (int64, bool, error) {
	switch ch := c.next(); {
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return c.numberInt()
	case ch == '"':
		raw, _, err := c.str()
		if err != nil {
			return 0, false, err
		}
		v, ok := parseIntText(raw)
		return v, ok, nil
	}
	return 0, false, c.skip()
}

// numText reads a number's text for exact conversion later; str reports a
// string value (a wrong type), returned as its content.
func (p *eventParser) numText(c *cur) ([]byte, bool, error) {
	switch ch := c.next(); {
	case ch == '-' || (ch >= '0' && ch <= '9'):
		b, err := c.number()
		return b, false, err
	case ch == '"':
		raw, _, err := c.str()
		if raw == nil {
			raw = []byte{}
		}
		return raw, true, err
	}
	return nil, true, c.skip()
}

func (p *eventParser) lane(c *cur, l *laneVal) error {
	switch ch := c.next(); {
	case ch == '-' || (ch >= '0' && ch <= '9'):
		start := c.i
		v, ok, err := c.numberInt()
		if err != nil {
			return err
		}
		if ok {
			l.kind, l.n = lnInt, v
		} else {
			l.kind, l.s = lnStr, c.b[start:c.i]
		}
		return nil
	case ch == '"':
		s, _, err := p.strVal(c)
		if err != nil {
			return err
		}
		l.kind, l.s = lnStr, s
		return nil
	}
	l.kind = lnNone
	if c.next() != 'n' { // anything but null is a wrong type
		l.kind = lnBad
	}
	return c.skip()
}

func (p *eventParser) int3(c *cur, dst *[3]int32) (bool, error) {
	if c.next() != '[' {
		return false, c.skip()
	}
	c.i++
	n := 0
	if c.next() == ']' {
		c.i++
		return true, nil
	}
	for {
		v, ok, err := p.intVal(c)
		if err != nil {
			return false, err
		}
		if ok && n < 3 {
			dst[n] = int32(v)
		}
		n++
		switch c.next() {
		case ',':
			c.i++
		case ']':
			c.i++
			return true, nil
		default:
			return false, c.fail("expected ',' or ']' in array")
		}
	}
}

func (p *eventParser) parseArgs(c *cur, a *args) error {
	c.i++ // '{'
	if c.next() == '}' {
		c.i++
		return nil
	}
	var err error
	for {
		key, _, err2 := c.str()
		if err2 != nil {
			return err2
		}
		if err := c.expect(':'); err != nil {
			return err
		}
		switch string(key) {
		case "correlation":
			a.corr, a.hasCorr, err = p.intVal(c)
		case "External id", "external id":
			a.ext, a.hasExt, err = p.intVal(c)
		case "device":
			a.device, a.hasDevice, err = p.intVal(c)
		case "stream":
			a.stream, a.hasStream, err = p.intVal(c)
		case "stream_id":
			a.streamID, a.hasStreamID, err = p.intVal(c)
		case "grid":
			a.hasGrid, err = p.int3(c, &a.grid)
		case "block":
			a.hasBlock, err = p.int3(c, &a.block)
		case "registers per thread":
			a.regs, _, err = p.intVal(c)
		case "shared memory":
			a.smem, _, err = p.intVal(c)
		case "bytes":
			a.bytes, a.hasBytes, err = p.intVal(c)
		case "kind":
			a.kind, _, err = p.textVal(c)
		case "graph id":
			a.graphID, _, err = p.intVal(c)
		case "Collective name":
			a.collName, a.hasCollName, err = p.textVal(c)
		case "dtype":
			a.dtype, _, err = p.textVal(c)
		case "Process Group Name":
			a.pgName, a.hasPGName, err = p.textVal(c)
		case "Process Group ID":
			a.pgID, a.hasPGID, err = p.intVal(c)
		case "In msg nelems":
			a.nelems, a.hasNelems, err = p.intVal(c)
		case "Group size":
			a.groupSize, a.hasGroupSize, err = p.intVal(c)
		case "Seq", "seq_num":
			// The collective's sequence number in its process group
			// (record_param_comms, PyTorch 2.x); not the autograd
			// "Sequence number".
			a.collSeq, a.hasCollSeq, err = p.intVal(c)
		case "Rank":
			a.rank, a.hasRank, err = p.intVal(c)
		case "cuda_sync_kind":
			a.syncKind, _, err = p.textVal(c)
		case "Device Type":
			a.devType, a.hasDevType, err = p.intVal(c)
		case "Device Id":
			a.devID, a.hasDevID, err = p.intVal(c)
		case "Bytes":
			a.memBytes, a.hasMemBytes, err = p.intVal(c)
		case "Addr":
			a.addr, _, err = p.intVal(c)
		case "Total Allocated":
			a.totalAlloc, a.hasTotalAlloc, err = p.intVal(c)
		case "Total Reserved":
			a.totalRes, a.hasTotalRes, err = p.intVal(c)
		case "name":
			a.mName, a.hasMName, err = p.strVal(c)
		case "Input Dims":
			a.inDims, err = rawVal(c)
		case "Input type":
			a.inTypes, err = rawVal(c)
		default:
			err = c.skip()
		}
		if err != nil {
			return err
		}
		switch c.next() {
		case ',':
			c.i++
		case '}':
			c.i++
			return nil
		default:
			return c.fail("expected ',' or '}' in args")
		}
	}
}

// rawVal skips one value and returns its text (a slice of the buffer, valid
// until the event is handled).
func rawVal(c *cur) ([]byte, error) {
	c.next()
	start := c.i
	if err := c.skip(); err != nil {
		return nil, err
	}
	return c.b[start:c.i], nil
}
