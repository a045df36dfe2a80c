package nccltests

import (
	"bytes"
	"math"
	"strconv"

	"github.com/tracedx/tracedx/model"
)

// col is what one whitespace token of a table row holds.
type col uint8

const (
	colSkip col = iota
	colSize
	colCount
	colType
	colRedop
	colRoot
	colTime
	colAlg
	colBus
	colWrong // #wrong: a count (v2.13+), or N/A
	colErr   // error/res: max abs deviation (<= v2.12), or N/A
	colOOP   // marks the start of the out-of-place half (no token)
	colIP    // marks the start of the in-place half (no token)
)

// layout is the column set of one table, learned from its header line.
type layout struct {
	cols     []col // one per token, with colOOP/colIP markers in between
	ntok     int   // tokens a full row has
	half1    int   // tokens up to the end of the first half (0 = one half)
	hasRedop bool
	hasRoot  bool
	errorCol bool
	timeMS   bool // v1.0 ("bytes N type op ... res"): times printed in ms
}

// newLayout tokenises a column header line ("size count type redop root
// time algbw busbw #wrong time ..."). inPlace is the half list of the line
// above it ("out-of-place in-place"), nil when absent.
func newLayout(hdr []byte, inPlace []bool) (*layout, string) {
	f := bytes.Fields(hdr)
	lay := &layout{}
	i := 0
	for ; i < len(f); i++ {
		w := string(f[i])
		if w == "time" || w == "cputime" {
			break
		}
		switch w {
		case "size", "bytes":
			lay.cols = append(lay.cols, colSize)
			lay.timeMS = w == "bytes"
		case "count", "N":
			lay.cols = append(lay.cols, colCount)
		case "type":
			lay.cols = append(lay.cols, colType)
		case "redop", "op":
			lay.cols = append(lay.cols, colRedop)
			lay.hasRedop = true
		case "root":
			lay.cols = append(lay.cols, colRoot)
			lay.hasRoot = true
		default:
			lay.cols = append(lay.cols, colSkip)
		}
	}
	if len(lay.cols) == 0 || lay.cols[0] != colSize {
		return nil, "no size column first"
	}
	halves := 0
	for ; i < len(f); i++ {
		switch w := string(f[i]); w {
		case "time", "cputime":
			place := colOOP
			if inPlace != nil && halves < len(inPlace) && inPlace[halves] {
				place = colIP
			} else if inPlace == nil && halves == 1 {
				place = colIP
			} else if halves > 1 {
				return nil, "more than two time columns"
			}
			if halves == 1 && place == colOOP {
				place = colIP
			}
			halves++
			lay.cols = append(lay.cols, place, colTime)
		case "algbw":
			lay.cols = append(lay.cols, colAlg)
		case "busbw":
			lay.cols = append(lay.cols, colBus)
		case "#wrong", "wrong":
			lay.cols = append(lay.cols, colWrong)
		case "error", "res":
			lay.cols = append(lay.cols, colErr)
			lay.errorCol = true
		case "timestamp":
			lay.cols = append(lay.cols, colSkip, colSkip) // "%Y-%m-%d %H:%M:%S"
		default:
			lay.cols = append(lay.cols, colSkip)
		}
	}
	if halves == 0 {
		return nil, "no time column"
	}
	lay.count()
	return lay, ""
}

// inferLayout guesses the columns of rows met without a table header (an
// excerpt) from their token count: size count type [redop] [root] and two
// halves of time algbw busbw wrong.
func inferLayout(toks [][]byte) *layout {
	lead := []col{colSize, colCount, colType}
	switch len(toks) {
	case 11:
	case 12:
		if isInt(toks[3]) {
			lead = append(lead, colRoot)
		} else {
			lead = append(lead, colRedop)
		}
	case 13:
		lead = append(lead, colRedop, colRoot)
	default:
		return nil
	}
	lay := &layout{cols: lead}
	for _, c := range lead {
		lay.hasRedop = lay.hasRedop || c == colRedop
		lay.hasRoot = lay.hasRoot || c == colRoot
	}
	w := colWrong
	if last := toks[len(toks)-1]; bytes.ContainsAny(last, ".e") {
		w = colErr
		lay.errorCol = true
	}
	lay.cols = append(lay.cols, colOOP, colTime, colAlg, colBus, w, colIP, colTime, colAlg, colBus, w)
	lay.count()
	return lay
}

// count sets ntok and half1.
func (lay *layout) count() {
	lay.ntok, lay.half1 = 0, 0
	halves := 0
	for _, c := range lay.cols {
		switch c {
		case colOOP, colIP:
			halves++
			if halves == 2 {
				lay.half1 = lay.ntok
			}
		default:
			lay.ntok++
		}
	}
}

// fields splits b on blanks into p.toks (reused).
func (p *parser) fields(b []byte) [][]byte {
	t := p.toks[:0]
	i := 0
	for i < len(b) {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i >= len(b) {
			break
		}
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\t' {
			j++
		}
		t = append(t, b[i:j])
		i = j
	}
	p.toks = t
	return t
}

// rowLine handles a line that starts with a digit or '-'. It reports
// whether it was a table row (or a fragment of one).
func (p *parser) rowLine(n int, t []byte) bool {
	if len(p.pend) > 0 {
		return p.fragment(n, t)
	}
	toks := p.fields(t)
	if len(toks) >= 2 && p.lay != nil && len(toks[0]) > 18 && isDigits(toks[0]) {
		// A size of 19+ digits does not fit the model's int64 (nor, from
		// 20 digits, nccl-tests' own size_t): say so rather than lose it.
		p.w.Warn(pos(n), "table row size %s does not fit in 63 bits; row skipped", clip(toks[0]))
		return true
	}
	if len(toks) < 2 || !isInt(toks[0]) {
		return false
	}
	if p.lay == nil {
		if len(toks) < 11 || !isInt(toks[1]) || isInt(toks[2]) {
			return false
		}
		lay := inferLayout(toks)
		if lay == nil {
			return false
		}
		r := p.run()
		if r == nil || r.Footer {
			r = p.newRun(n)
		}
		p.lay = lay
		r.ErrorColumn = lay.errorCol
		p.w.Warn(pos(n), "table rows without a column header; layout inferred from %d fields", len(toks))
	}
	if len(toks) < p.lay.ntok-1 || (len(toks) == p.lay.ntok-1 && !p.lay.hasRedop) {
		if !isInt(toks[1]) {
			return false
		}
		p.pend = append(p.pend[:0], t...)
		p.pendLine = n
		return true
	}
	p.addRow(n, toks)
	return true
}

// fragment joins a piece of a row split by an interleaved NCCL line.
func (p *parser) fragment(n int, t []byte) bool {
	if p.lay == nil {
		return false
	}
	if len(p.pend) == 0 {
		toks := p.fields(t)
		if len(toks) == 0 || !isInt(toks[0]) {
			p.w.Warn(pos(n), "row fragment %q could not be joined to a row; skipped", clip(t))
			return true
		}
		if len(toks) >= p.lay.ntok {
			p.addRow(n, toks)
			return true
		}
		p.pend = append(p.pend[:0], t...)
		p.pendLine = n
		return true
	}
	if toks := p.fields(t); (len(toks) >= p.lay.ntok || (len(toks) == p.lay.ntok-1 && p.lay.hasRedop)) && isInt(toks[0]) && isInt(toks[1]) {
		// A complete row of its own: the pending piece was cut off.
		p.flushPending()
		p.addRow(n, p.fields(t))
		return true
	}
	if len(p.pend)+len(t) > 4096 {
		// Rows are short: this is not a row being completed.
		p.flushPending()
		return true
	}
	p.pend = append(p.pend, ' ')
	p.pend = append(p.pend, t...)
	toks := p.fields(p.pend)
	if len(toks) >= p.lay.ntok {
		p.addRow(p.pendLine, toks)
		p.pend = p.pend[:0]
	}
	return true
}

// flushPending drops an incomplete row with a warning.
func (p *parser) flushPending() {
	if len(p.pend) == 0 {
		return
	}
	toks := p.fields(p.pend)
	want := 0
	if p.lay != nil {
		want = p.lay.ntok
	}
	p.w.Warn(pos(p.pendLine), "incomplete table row (%d of %d fields); skipped", len(toks), want)
	p.pend = p.pend[:0]
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// addRow parses a full row's tokens with the current layout.
func (p *parser) addRow(n int, toks [][]byte) {
	lay := p.lay
	r := p.run()
	if r == nil {
		r = p.newRun(n)
		r.TableHeader = false
	}
	if len(toks) == lay.ntok-1 && lay.hasRedop {
		// hypercube_perf prints an empty redop: one token fewer.
		t2 := make([][]byte, 0, len(toks)+1)
		ri := 0
		for _, c := range lay.cols {
			if c == colOOP || c == colIP {
				continue
			}
			if c == colRedop {
				break
			}
			ri++
		}
		t2 = append(t2, toks[:ri]...)
		t2 = append(t2, nil)
		t2 = append(t2, toks[ri:]...)
		toks = t2
	}
	if len(toks) < lay.ntok {
		p.w.Warn(pos(n), "table row has %d of %d fields; skipped", len(toks), lay.ntok)
		return
	}
	if len(toks) > lay.ntok {
		r.Extras++
	}
	row := model.BenchRow{Root: -1, Line: n,
		OutOfPlace: model.BenchResult{Wrong: -1, MaxDelta: -1}, InPlace: model.BenchResult{Wrong: -1, MaxDelta: -1}}
	var h *model.BenchResult
	k := 0
	for _, c := range lay.cols {
		switch c {
		case colOOP:
			h = &row.OutOfPlace
			h.Present = true
			continue
		case colIP:
			h = &row.InPlace
			h.Present = true
			continue
		}
		tok := toks[k]
		k++
		var ok bool
		switch c {
		case colSize:
			row.SizeBytes, ok = parseUint(tok)
		case colCount:
			row.Count, ok = parseUint(tok)
		case colType:
			row.Dtype, ok = p.str(tok), true
		case colRedop:
			row.Redop, ok = p.str(tok), true
		case colRoot:
			var v int64
			v, ok = parseInt(tok)
			row.Root = int(v)
		case colTime:
			h.TimeUS, ok = parseNum(tok)
			if lay.timeMS {
				h.TimeUS *= 1000
			}
		case colAlg:
			h.AlgBWGBps, ok = parseNum(tok)
		case colBus:
			h.BusBWGBps, ok = parseNum(tok)
		case colWrong:
			if isNA(tok) {
				h.Wrong, ok = -1, true
			} else {
				var f float64
				f, ok = parseNum(tok)
				if ok && f < 9e18 {
					h.Wrong = int64(f)
				} else {
					ok = false
				}
			}
		case colErr:
			if isNA(tok) {
				ok = true
			} else {
				h.MaxDelta, ok = parseNum(tok)
			}
		default:
			ok = true
		}
		if !ok {
			if c == colWrong || c == colErr {
				p.w.Warn(pos(n), "row %d: %q is not a valid #wrong/error value; kept as N/A", row.SizeBytes, clip(tok))
				h.Wrong, h.MaxDelta = -1, -1
				continue
			}
			p.w.Warn(pos(n), "table row field %q not understood; row skipped", clip(tok))
			return
		}
	}
	r.Rows = append(r.Rows, row)
}

// isDigits reports whether b is a non-empty run of decimal digits.
func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

func isNA(b []byte) bool { return string(b) == "N/A" || string(b) == "n/a" || string(b) == "-" }

func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func parseInt(b []byte) (int64, bool) {
	if len(b) > 0 && b[0] == '-' {
		v, ok := parseUint(b[1:])
		return -v, ok
	}
	return parseUint(b)
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseNum parses a finite, non-negative decimal ("123.45", "1271449",
// "6e+06", "1.67772e+07"). The fast path is exact: an integer mantissa below
// 2^53 divided by an exact power of ten rounds correctly, as ParseFloat does.
func parseNum(b []byte) (float64, bool) {
	var mant uint64
	frac, nd := -1, 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if nd >= 15 {
				return parseSlow(b)
			}
			mant = mant*10 + uint64(c-'0')
			if mant != 0 || frac >= 0 {
				nd++
			}
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return parseSlow(b)
		}
	}
	if len(b) == 0 || (frac == 0 && len(b) == 1) {
		return 0, false
	}
	if frac <= 0 {
		return float64(mant), true
	}
	if frac >= len(pow10) {
		return parseSlow(b)
	}
	return float64(mant) / pow10[frac], true
}

func parseSlow(b []byte) (float64, bool) {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

func benchNum(f float64) bool { return f >= 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }

// inferRanks derives the rank count from busbw/algbw when the log has no rank
// lines, for the collectives whose factor depends on it. The answer is kept
// only when the 2-decimal rounding of both columns cannot change it.
func inferRanks(r *model.BenchRun) int {
	var best *model.BenchResult
	for i := range r.Rows {
		for _, h := range []*model.BenchResult{&r.Rows[i].OutOfPlace, &r.Rows[i].InPlace} {
			if h.Present && (best == nil || h.AlgBWGBps > best.AlgBWGBps) {
				best = h
			}
		}
	}
	if best == nil || best.AlgBWGBps < 1 {
		return 0
	}
	lo := (best.BusBWGBps - 0.005) / (best.AlgBWGBps + 0.005)
	hi := (best.BusBWGBps + 0.005) / (best.AlgBWGBps - 0.005)
	var nOf func(f float64) float64
	switch r.Collective {
	case "all_reduce":
		nOf = func(f float64) float64 { return 2 / (2 - f) }
	case "all_gather", "reduce_scatter", "alltoall", "gather", "scatter", "alltoallv":
		nOf = func(f float64) float64 { return 1 / (1 - f) }
	default:
		return 0
	}
	if hi >= nOfLimit(r.Collective) || lo <= 0 {
		return 0
	}
	a, b := math.Round(nOf(lo)), math.Round(nOf(hi))
	if a != b || a < 2 || a > 1e6 {
		return 0
	}
	return int(a)
}

func nOfLimit(c string) float64 {
	if c == "all_reduce" {
		return 2
	}
	return 1
}

// inferCollective names the collective of a run whose log never printed the
// program name, from its columns and the busbw/algbw factor.
func inferCollective(r *model.BenchRun, lay *layout) string {
	if len(r.Rows) == 0 || lay == nil {
		return ""
	}
	var f float64
	var alg float64
	var first = r.Rows[0]
	allIPNA := true
	for _, row := range r.Rows {
		h := row.OutOfPlace
		if !h.Present {
			h = row.InPlace
		}
		if h.AlgBWGBps > alg {
			alg, f = h.AlgBWGBps, h.BusBWGBps/h.AlgBWGBps
		}
		if row.InPlace.Present && row.InPlace.Wrong != -1 {
			allIPNA = false
		}
	}
	if alg < 0.1 {
		return ""
	}
	op := lay.hasRedop && first.Redop != "" && first.Redop != "none"
	switch {
	case f > 1.02:
		return "all_reduce"
	case f > 0.98:
		switch {
		case lay.hasRoot && first.Root >= 0 && lay.hasRedop:
			if op {
				return "reduce"
			}
			return "broadcast"
		case lay.hasRoot && first.Root >= 0:
			return "broadcast"
		case op && (r.Ranks == 2 || r.Ranks == 0):
			return "all_reduce"
		case op:
			return "sendrecv"
		case !lay.hasRedop || first.Redop == "none":
			return "sendrecv"
		}
	case f > 0.01:
		if op {
			return "reduce_scatter"
		}
		if allIPNA && !lay.errorCol {
			return "alltoall"
		}
		return "all_gather"
	}
	return ""
}
