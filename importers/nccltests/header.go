package nccltests

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Header and footer lines of a run: version, parameters, device list,
// table header, out-of-bounds and average lines.

// header handles a line that starts with '#' or a header word. It reports
// whether the line was recognised.
func (p *parser) header(n int, t []byte) bool {
	s := t
	for len(s) > 0 && s[0] == '#' {
		s = s[1:]
	}
	s = bytes.TrimSpace(s)
	if len(s) == 0 {
		return false // a lone "#": separator
	}
	switch {
	case bytes.HasPrefix(s, []byte("nccl-tests version")):
		m := reVersion.FindSubmatch(s)
		if m == nil {
			return false
		}
		p.flushPending()
		if r := p.run(); r != nil && (r.TableHeader || len(r.Rows) > 0 || r.Footer) {
			p.closeRun()
		}
		p.pendVersion = string(m[1])
		p.pendHeaders = atoi(m[3])
		p.pendLibrary = atoi(m[4])
		p.producerTool = "nccl-tests"
		return true
	case bytes.HasPrefix(s, []byte("Collective test ")):
		m := reStart.FindSubmatch(s)
		if m == nil {
			return false
		}
		if string(m[1]) == "starting" {
			p.flushPending()
			if r := p.run(); r != nil && (r.TableHeader || len(r.Rows) > 0 || r.Footer) {
				p.closeRun()
			}
			p.pendProgram = string(m[2])
		} else if r := p.run(); r != nil {
			r.Concluded = true
			if r.Program == "" {
				r.Program = string(m[2])
			}
		}
		return true
	case bytes.HasPrefix(s, []byte("nThread")):
		return p.paramsLine(n, s)
	case bytes.HasPrefix(s, []byte("Rank ")):
		d, ok := p.rankLine(s)
		if !ok {
			return false
		}
		d.Line = n
		r := p.run()
		if r == nil || r.TableHeader || len(r.Rows) > 0 || r.Footer {
			r = p.newRun(n)
		}
		r.Devices = append(r.Devices, d)
		return true
	case bytes.HasPrefix(s, []byte("size ")) || bytes.HasPrefix(s, []byte("bytes ")):
		return p.tableHeader(n, s)
	case bytes.HasPrefix(s, []byte("(B)")):
		return true
	case bytes.HasPrefix(s, []byte("out-of-place")) || bytes.HasPrefix(s, []byte("in-place")):
		return p.halfHeader(n, s)
	case bytes.HasPrefix(s, []byte("Out of bounds values")):
		m := reOOB.FindSubmatch(s)
		if m == nil {
			return false
		}
		p.flushPending()
		r := p.footerRun(n)
		r.OOBValues = atoi64(m[1])
		r.OOBFailed = string(m[2]) == "FAILED" || r.OOBValues > 0
		r.Footer = true
		return true
	case bytes.HasPrefix(s, []byte("Avg bus bandwidth")):
		return p.avgLine(n, s)
	case bytes.HasPrefix(s, []byte("NCCL Tests compiled with NCCL")):
		if m := reNCCL1.FindSubmatch(s); m != nil {
			p.pendVersion = "NCCL " + string(m[1]) + "." + string(m[2])
			if r := p.run(); r != nil && !r.TableHeader {
				r.TestsVersion, p.pendVersion = p.pendVersion, ""
			}
			return true
		}
		return false
	case bytes.HasPrefix(s, []byte("error:")):
		m := reErrFoot.FindSubmatch(s)
		if m == nil {
			return false
		}
		if msg := strings.TrimSpace(string(m[1])); msg != "" {
			p.addFailure(n, "nccl", "", "", msg)
		}
		return true
	}
	if m := reReducing.FindSubmatch(s); m != nil {
		// The effective maxBytes: the header printed the requested one.
		if r := p.run(); r != nil && !r.TableHeader {
			r.Params.MaxBytes = atoi64(m[1])
		}
		return true
	}
	if reCaptured.Match(s) {
		return true
	}
	return false
}

// paramsLine reads the parameter line of nccl-tests or rccl-tests.
func (p *parser) paramsLine(n int, s []byte) bool {
	if pr, ok := p.params(s); ok {
		r := p.paramsRun(n)
		r.Params = pr
		if r.Rows == nil {
			r.Rows = make([]model.BenchRow, 0, expectedRows(pr))
		}
		return true
	}
	if m := reRCCL.FindSubmatch(s); m != nil {
		r := p.paramsRun(n)
		pr := &r.Params
		pr.NThread, pr.NGpus, pr.NRanks = atoi(m[1]), atoi(m[2]), atoi(m[3])
		pr.MinBytes, pr.MaxBytes = atoi64(m[4]), atoi64(m[5])
		if string(m[7]) == "factor" {
			pr.StepFactor = atoi64(m[6])
		} else {
			pr.StepBytes = atoi64(m[6])
		}
		pr.WarmupIters, pr.Iters, pr.Validation = atoi(m[8]), atoi(m[9]), atoi(m[10])
		if p.producerTool == "" {
			p.producerTool = "rccl-tests"
		}
		return true
	}
	return false
}

// tableHeader reads the column header line of a results table.
func (p *parser) tableHeader(n int, s []byte) bool {
	if !bytes.Contains(s, []byte("algbw")) {
		return false
	}
	lay, err := newLayout(s, p.halfSpec)
	if err != "" {
		p.w.Warn(pos(n), "table header not understood (%s); its rows will be skipped", err)
		p.lay = nil
		return true
	}
	p.flushPending()
	r := p.run()
	if r != nil && r.TableHeader && len(r.Rows) == 0 && !r.Footer {
		// The same header again before any row: independent processes
		// printing their own copy of the run.
		p.lay = lay
		return true
	}
	if r == nil || r.TableHeader || len(r.Rows) > 0 || r.Footer {
		r = p.newRun(n)
	}
	r.TableHeader = true
	r.ErrorColumn = lay.errorCol
	p.lay = lay
	p.halfSpec = nil
	return true
}

// halfHeader reads the "out-of-place in-place" line above the columns.
func (p *parser) halfHeader(n int, s []byte) bool {
	norm := bytes.Join(bytes.Fields(s), []byte(" "))
	if !reHdrHalf.Match(norm) {
		return false
	}
	f := bytes.Fields(norm)
	p.halfSpec = p.halfSpec[:0]
	for _, w := range f {
		switch string(w) {
		case "out-of-place":
			p.halfSpec = append(p.halfSpec, false)
		case "in-place":
			p.halfSpec = append(p.halfSpec, true)
		}
	}
	return true
}

// avgLine reads the "Avg bus bandwidth" footer.
func (p *parser) avgLine(n int, s []byte) bool {
	m := reAvg.FindSubmatch(s)
	if m == nil {
		return false
	}
	p.flushPending()
	r := p.footerRun(n)
	if r.AvgLines == 0 {
		v, err := strconv.ParseFloat(string(m[1]), 64)
		switch {
		case err != nil:
			p.w.Warn(pos(n), "Avg bus bandwidth %q is not a number", m[1])
		case !benchNum(v):
			p.w.Warn(pos(n), "Avg bus bandwidth %q is not a finite non-negative number; not kept", m[1])
		default:
			r.ReportedAvgBusBW = v
		}
	}
	r.AvgLines++
	r.AvgFailed = r.AvgFailed || string(m[2]) == "FAILED"
	r.Footer = true
	return true
}
