package kinetogen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"

	"github.com/klauspost/compress/gzip"
)

// sentinels mark the numeric fields to shift in a marshalled template event.
const (
	sentTS   = "-7777777771"
	sentID   = "-7777777772"
	sentCorr = "-7777777773"
	sentExt  = "-7777777774"
)

type tmplEvent struct {
	segs [][]byte // len(vals)+1 literal pieces
	vals []string // original number texts
	kind []byte   // 't' ts, 'i' id/corr/ext
}

// Replicate writes dst: the Kineto trace src (plain or gzip) repeated until
// about target bytes of JSON, each copy shifted past the previous one in
// time and in ids (flow ids, correlation, External id), so that the result is
// one long, valid, realistic trace. Benchmarks use it to make large inputs at
// benchmark time instead of committing them.
func Replicate(src, dst string, target int64) error {
	top, evs, err := readTrace(src)
	if err != nil {
		return err
	}
	b := bounds{minTS: 1 << 62}
	var tmpls []tmplEvent
	for _, e := range evs {
		tm, err := b.template(e)
		if err != nil {
			return err
		}
		tmpls = append(tmpls, tm)
	}
	return writeReplicas(dst, top, tmpls, b.maxTS-b.minTS+1000, b.maxID+1, target)
}

// readTrace reads a Kineto trace (plain or gzip): its top-level keys other
// than traceEvents, and the events with numbers kept as written.
func readTrace(src string) (map[string]json.RawMessage, []map[string]any, error) {
	f0, err := os.Open(src)
	if err != nil {
		return nil, nil, err
	}
	defer f0.Close()
	br := bufio.NewReader(f0)
	var rd io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		defer zr.Close()
		rd = zr
	}
	dec := json.NewDecoder(rd)
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, nil, err
	}
	var evs []map[string]any
	d2 := json.NewDecoder(bytes.NewReader(top["traceEvents"]))
	d2.UseNumber()
	if err := d2.Decode(&evs); err != nil {
		return nil, nil, err
	}
	delete(top, "traceEvents")
	return top, evs, nil
}

// bounds are the time range (µs) and largest id seen over all events.
type bounds struct {
	minTS, maxTS, maxID int64
}

// template replaces ts, id, correlation and External id of e with
// sentinels, marshals it and cuts the JSON at the sentinels.
func (b *bounds) template(e map[string]any) (tmplEvent, error) {
	orig := map[string]string{}
	swap := func(m map[string]any, k, sent string) {
		n, ok := m[k].(json.Number)
		if !ok {
			return
		}
		s := n.String()
		if sent == sentTS {
			us, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return
			}
			b.minTS, b.maxTS = min(b.minTS, int64(us)), max(b.maxTS, int64(us))
		} else {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return
			}
			b.maxID = max(b.maxID, v)
		}
		orig[sent] = s
		m[k] = json.Number(sent)
	}
	swap(e, "ts", sentTS)
	swap(e, "id", sentID)
	if a, ok := e["args"].(map[string]any); ok {
		swap(a, "correlation", sentCorr)
		swap(a, "External id", sentExt)
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return tmplEvent{}, err
	}
	var tm tmplEvent
	rest := raw
	for {
		best, bestAt := "", -1
		for _, s := range []string{sentTS, sentID, sentCorr, sentExt} {
			if i := bytes.Index(rest, []byte(s)); i >= 0 && (bestAt < 0 || i < bestAt) {
				best, bestAt = s, i
			}
		}
		if bestAt < 0 {
			break
		}
		tm.segs = append(tm.segs, rest[:bestAt])
		tm.vals = append(tm.vals, orig[best])
		k := byte('i')
		if best == sentTS {
			k = 't'
		}
		tm.kind = append(tm.kind, k)
		rest = rest[bestAt+len(best):]
	}
	tm.segs = append(tm.segs, rest)
	return tm, nil
}

// writeReplicas writes dst: the top-level keys in sorted order, then the
// templates repeated, each copy shifted by span µs and idSpan ids, until
// about target bytes.
func writeReplicas(dst string, top map[string]json.RawMessage, tmpls []tmplEvent, span, idSpan, target int64) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("{\n")
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %q: %s,\n", k, top[k])
	}
	w.WriteString("  \"traceEvents\": [\n")
	var written int64
	first := true
	var num []byte
	for rep := int64(0); written < target; rep++ {
		for _, tm := range tmpls {
			if !first {
				w.WriteString(",\n  ")
				written += 4
			}
			first = false
			for j, seg := range tm.segs {
				w.Write(seg)
				written += int64(len(seg))
				if j < len(tm.vals) {
					num = shiftNum(num[:0], tm.vals[j], tm.kind[j], rep, span, idSpan)
					w.Write(num)
					written += int64(len(num))
				}
			}
		}
	}
	w.WriteString("\n  ]\n}\n")
	return w.Flush()
}

// shiftNum adds rep*span µs (ts) or rep*idSpan (ids) to a number's text
// exactly, keeping its decimals.
func shiftNum(dst []byte, v string, kind byte, rep, span, idSpan int64) []byte {
	intPart, frac := v, ""
	for i := 0; i < len(v); i++ {
		if v[i] == '.' {
			intPart, frac = v[:i], v[i:]
			break
		}
	}
	n, _ := strconv.ParseInt(intPart, 10, 64)
	if kind == 't' {
		n += rep * span
	} else if n != 0 {
		n += rep * idSpan
	}
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, frac...)
}

// GzipFile compresses src into dst.
func GzipFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	if _, err := io.Copy(zw, in); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return out.Close()
}
