package joblog

import (
	"bufio"
	"bytes"
	"io"
)

// maxLine is how much of one physical line is kept; the rest is read and
// dropped, so there is no line-length limit.
const maxLine = 1 << 20

// lines streams physical lines with a one-line lookahead (to join wrapped
// lines). Returned slices are valid until the next call.
type lines struct {
	r       *bufio.Reader
	cur     []byte
	next    []byte
	hasNext bool
	nextN   int
	n       int // 1-based number of the line last returned by read
	err     error
	cut     bool // the line last returned was cut at maxLine
	nextCut bool
}

func newLines(r io.Reader) *lines {
	return &lines{r: bufio.NewReaderSize(r, 256<<10)}
}

// fill reads one physical line into dst.
func (l *lines) fill(dst []byte) ([]byte, bool, bool) {
	dst = dst[:0]
	cut := false
	got := false
	for {
		frag, err := l.r.ReadSlice('\n')
		if len(frag) > 0 {
			got = true
		}
		if room := maxLine - len(dst); room > 0 {
			if len(frag) > room {
				dst = append(dst, frag[:room]...)
				cut = true
			} else {
				dst = append(dst, frag...)
			}
		} else if len(frag) > 0 {
			cut = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			l.err = err
		}
		if err != nil && !got {
			return dst, false, false
		}
		break
	}
	for len(dst) > 0 && (dst[len(dst)-1] == '\n' || dst[len(dst)-1] == '\r') {
		dst = dst[:len(dst)-1]
	}
	return dst, cut, true
}

// read returns the next physical line.
func (l *lines) read() ([]byte, bool) {
	if l.hasNext {
		l.cur, l.next = l.next, l.cur
		l.hasNext = false
		l.n = l.nextN
		l.cut = l.nextCut
		return l.cur, true
	}
	var ok bool
	l.cur, l.cut, ok = l.fill(l.cur)
	if ok {
		l.n++
	}
	return l.cur, ok
}

// peek returns the line after the last one read without consuming it.
func (l *lines) peek() ([]byte, bool) {
	if !l.hasNext {
		var ok bool
		l.next, l.nextCut, ok = l.fill(l.next)
		if !ok {
			return nil, false
		}
		l.hasNext = true
		l.nextN = l.n + 1
	}
	return l.next, true
}

// consume drops the peeked line (it was joined to the current one).
func (l *lines) consume() {
	if l.hasNext {
		l.hasNext = false
		l.n = l.nextN
	}
}

// stripANSI removes ESC [ ... final-byte sequences (colours, cursor moves).
func stripANSI(b []byte) []byte {
	if bytes.IndexByte(b, 0x1b) < 0 {
		return b
	}
	out := b[:0:0]
	for i := 0; i < len(b); i++ {
		if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '[' {
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		out = append(out, b[i])
	}
	return out
}
