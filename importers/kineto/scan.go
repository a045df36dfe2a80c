package kineto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"unicode/utf8"
)

// This file is the byte-level JSON layer: a refilling buffer that hands out
// whole values (extent), and a strict recursive-descent cursor over one
// value held in memory. Nothing here builds a document tree.

// syntaxError is a fatal JSON problem at an absolute byte offset.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

var errTruncated = errors.New("unexpected end of input (truncated file?)")

// reader is a growable window over the input stream: buf[pos:end] holds the
// bytes not yet consumed; base is the stream offset of buf[0].
type reader struct {
	r    io.Reader
	buf  []byte
	pos  int
	end  int
	base int64
	eof  bool
	rerr error
}

const bufSize = 1 << 20

// startSize is the first buffer; it grows to bufSize once the input proves
// larger, so that tiny inputs (tests, fuzzing) stay cheap.
const startSize = 32 << 10

func newReader(r io.Reader) *reader {
	return &reader{r: r, buf: make([]byte, startSize)}
}

// offset returns the stream offset of buf[pos+i].
func (r *reader) offset(i int) int64 { return r.base + int64(r.pos+i) }

// fill reads more input, keeping buf[pos:end] (moved to the front when
// useful). It returns false when no more input can come.
func (r *reader) fill() bool {
	for {
		if r.eof {
			return false
		}
		if len(r.buf) < bufSize && r.end == len(r.buf) {
			nb := make([]byte, bufSize)
			r.end = copy(nb, r.buf[r.pos:r.end])
			r.base += int64(r.pos)
			r.pos = 0
			r.buf = nb
		}
		if r.pos > 0 && (r.end == len(r.buf) || r.pos >= len(r.buf)/2) {
			n := copy(r.buf, r.buf[r.pos:r.end])
			r.base += int64(r.pos)
			r.end = n
			r.pos = 0
		}
		if r.end == len(r.buf) {
			nb := make([]byte, 2*len(r.buf))
			copy(nb, r.buf[:r.end])
			r.buf = nb
		}
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.eof = true
			if err != io.EOF {
				r.rerr = err
			}
		}
		if n > 0 {
			return true
		}
	}
}

// fillAtLeast reads until n more bytes are buffered or the input ends; it
// returns false when nothing more could be read.
func (r *reader) fillAtLeast(n int) bool {
	want := r.end - r.pos + n
	got := false
	for r.end-r.pos < want {
		if !r.fill() {
			break
		}
		got = true
	}
	return got
}

// ws skips whitespace; it returns false at the end of input.
func (r *reader) ws() bool {
	for {
		for r.pos < r.end {
			switch r.buf[r.pos] {
			case ' ', '\t', '\n', '\r':
				r.pos++
			default:
				return true
			}
		}
		if !r.fill() {
			return false
		}
	}
}

// peek returns the next non-space byte without consuming it.
func (r *reader) peek() (byte, bool) {
	if !r.ws() {
		return 0, false
	}
	return r.buf[r.pos], true
}

func (r *reader) errAt(i int, format string, args ...any) error {
	return &syntaxError{off: r.offset(i), msg: fmt.Sprintf(format, args...)}
}

func (r *reader) eofErr() error {
	if r.rerr != nil {
		return &syntaxError{off: r.offset(r.end - r.pos), msg: "read error: " + r.rerr.Error()}
	}
	return &syntaxError{off: r.offset(r.end - r.pos), msg: errTruncated.Error()}
}

// extent returns n such that buf[pos:pos+n] is the whole JSON value that
// starts at pos (after whitespace), reading more input as needed. It checks
// only string and bracket structure; the value's grammar is checked by the
// cursor that parses it.
func (r *reader) extent() (int, error) {
	if !r.ws() {
		return 0, r.eofErr()
	}
	c := r.buf[r.pos]
	i := 0
	if c != '{' && c != '[' && c != '"' {
		for {
			for r.pos+i < r.end {
				switch r.buf[r.pos+i] {
				case ',', '}', ']', ' ', '\t', '\n', '\r', '{', '[', '"', ':':
					if i == 0 {
						return 0, r.errAt(0, "unexpected %q", r.buf[r.pos])
					}
					return i, nil
				}
				i++
			}
			if !r.fill() {
				return i, nil
			}
		}
	}
	depth := 0
	inStr := false
	strStart := 0
	for {
		buf := r.buf[r.pos:r.end]
		for i < len(buf) {
			if inStr {
				j := bytes.IndexByte(buf[i:], '"')
				if j < 0 {
					i = len(buf)
					break
				}
				q := i + j
				k := q - 1
				for k >= strStart && buf[k] == '\\' {
					k--
				}
				i = q + 1
				if (q-1-k)%2 == 1 {
					continue // escaped quote
				}
				inStr = false
				if depth == 0 {
					return i, nil
				}
				continue
			}
			switch buf[i] {
			case '"':
				inStr = true
				strStart = i + 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth <= 0 {
					if depth < 0 {
						return 0, r.errAt(i, "unbalanced %q", buf[i])
					}
					return i + 1, nil
				}
			}
			i++
		}
		if !r.fill() {
			return 0, r.eofErr()
		}
	}
}

// cur is a strict JSON cursor over one complete value in memory. Offsets in
// its errors are absolute (off + i).
type cur struct {
	b     []byte
	i     int
	off   int64
	depth int
}

func (c *cur) fail(format string, args ...any) error {
	return &syntaxError{off: c.off + int64(c.i), msg: fmt.Sprintf(format, args...)}
}

func (c *cur) ws() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// next returns the next non-space byte (0 at the end) without consuming it.
func (c *cur) next() byte {
	if c.i < len(c.b) {
		if ch := c.b[c.i]; ch > ' ' {
			return ch
		}
		if c.i+1 < len(c.b) && c.b[c.i] == ' ' && c.b[c.i+1] > ' ' {
			c.i++
			return c.b[c.i]
		}
	}
	c.ws()
	if c.i >= len(c.b) {
		return 0
	}
	return c.b[c.i]
}

func (c *cur) expect(ch byte) error {
	if c.next() != ch {
		if c.i >= len(c.b) {
			return c.fail("expected %q, found end of value", ch)
		}
		return c.fail("expected %q, found %q", ch, c.b[c.i])
	}
	c.i++
	return nil
}

// str reads a string; raw is its content between the quotes, esc tells
// whether it holds escapes (then use unescape).
func (c *cur) str() (raw []byte, esc bool, err error) {
	if c.next() != '"' {
		return nil, false, c.fail("expected string")
	}
	b := c.b
	start := c.i + 1
	i := start
	for {
		// Find the next '"' or '\\' eight bytes at a time (SWAR).
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			q := w ^ 0x2222222222222222 // '"'
			e := w ^ 0x5c5c5c5c5c5c5c5c // '\\'
			m := ((q - 0x0101010101010101) &^ q) | ((e - 0x0101010101010101) &^ e)
			if m &= 0x8080808080808080; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto found
			}
			i += 8
		}
		for ; i < len(b); i++ {
			if ch := b[i]; ch == '"' || ch == '\\' {
				goto found
			}
		}
		c.i = len(b)
		return nil, false, c.fail("unterminated string")
	found:
		if b[i] == '"' {
			c.i = i + 1
			return b[start:i], esc, nil
		}
		esc = true
		i++
		if i >= len(b) {
			c.i = len(b)
			return nil, false, c.fail("unterminated string")
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+5 > len(b) || !isHex4(b[i+1:i+5]) {
				c.i = i
				if i+5 > len(b) {
					c.i = len(b)
				}
				return nil, false, c.fail("bad \\u escape")
			}
			i += 5
		default:
			c.i = i
			return nil, false, c.fail("bad escape \\%c", b[i])
		}
	}
}

func isHex4(b []byte) bool {
	for _, x := range b[:4] {
		if hexVal(x) < 0 {
			return false
		}
	}
	return true
}

func hexVal(x byte) int {
	switch {
	case x >= '0' && x <= '9':
		return int(x - '0')
	case x >= 'a' && x <= 'f':
		return int(x-'a') + 10
	case x >= 'A' && x <= 'F':
		return int(x-'A') + 10
	}
	return -1
}

// unescape appends the decoded form of a valid escaped string body to dst.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		ch := raw[i]
		if ch != '\\' || i+1 >= len(raw) {
			dst = append(dst, ch)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if i+4 >= len(raw) {
				return dst
			}
			r := rune(hexVal(raw[i+1])<<12 | hexVal(raw[i+2])<<8 | hexVal(raw[i+3])<<4 | hexVal(raw[i+4]))
			i += 4
			if r >= 0xD800 && r < 0xDC00 && i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				lo := rune(hexVal(raw[i+3])<<12 | hexVal(raw[i+4])<<8 | hexVal(raw[i+5])<<4 | hexVal(raw[i+6]))
				if lo >= 0xDC00 && lo < 0xE000 {
					r = (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000
					i += 6
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			dst = append(dst, raw[i])
		}
	}
	return dst
}

// number reads a JSON number token and returns its text.
func (c *cur) number() ([]byte, error) {
	c.ws()
	start := c.i
	b := c.b
	i := c.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	d := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == d {
		c.i = i
		return nil, c.fail("bad number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		d = i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			c.i = i
			return nil, c.fail("bad number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d = i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			c.i = i
			return nil, c.fail("bad number")
		}
	}
	c.i = i
	return b[start:i], nil
}

// numberInt reads a number token and its integer value in one pass for
// plain integers (the common case), falling back to number and parseInt for
// fractions, exponents and long digit runs.
func (c *cur) numberInt() (int64, bool, error) {
	c.ws()
	b := c.b
	i := c.i
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	d := i
	var m uint64
	for i < len(b) {
		ch := b[i] - '0'
		if ch > 9 {
			break
		}
		m = m*10 + uint64(ch)
		i++
	}
	if i == d || i-d > 18 || (i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E')) {
		tok, err := c.number()
		if err != nil {
			return 0, false, err
		}
		v, ok := parseInt(tok)
		return v, ok, nil
	}
	c.i = i
	if neg {
		return -int64(m), true, nil
	}
	return int64(m), true, nil
}

const maxDepth = 512

// skip reads and checks any value.
func (c *cur) skip() error {
	switch c.next() {
	case '"':
		_, _, err := c.str()
		return err
	case '{':
		c.depth++
		if c.depth > maxDepth {
			return c.fail("nesting too deep")
		}
		c.i++
		if c.next() == '}' {
			c.i++
			c.depth--
			return nil
		}
		for {
			if _, _, err := c.str(); err != nil {
				return err
			}
			if err := c.expect(':'); err != nil {
				return err
			}
			if err := c.skip(); err != nil {
				return err
			}
			switch c.next() {
			case ',':
				c.i++
			case '}':
				c.i++
				c.depth--
				return nil
			default:
				return c.fail("expected ',' or '}' in object")
			}
		}
	case '[':
		c.depth++
		if c.depth > maxDepth {
			return c.fail("nesting too deep")
		}
		c.i++
		if c.next() == ']' {
			c.i++
			c.depth--
			return nil
		}
		for {
			if err := c.skip(); err != nil {
				return err
			}
			switch c.next() {
			case ',':
				c.i++
			case ']':
				c.i++
				c.depth--
				return nil
			default:
				return c.fail("expected ',' or ']' in array")
			}
		}
	case 't':
		return c.lit("true")
	case 'f':
		return c.lit("false")
	case 'n':
		return c.lit("null")
	case 0:
		return c.fail("expected a value, found end of value")
	default:
		_, err := c.number()
		return err
	}
}

func (c *cur) lit(s string) error {
	if !bytes.HasPrefix(c.b[c.i:], []byte(s)) {
		return c.fail("bad literal")
	}
	c.i += len(s)
	return nil
}

// parseNs converts a decimal µs text (int, fraction, exponent) exactly to
// integer nanoseconds; digits beyond the 19th significant one and anything
// below 1 ns are rounded half up. ok is false on overflow or bad syntax.
func parseNs(b []byte) (int64, bool) {
	i := 0
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	var m uint64
	nd := 0          // significant digits kept in m
	exp := 3         // power of ten that turns m into ns
	roundDigit := -1 // first dropped digit
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := int(b[i] - '0')
		digits++
		switch {
		case nd < 19:
			if m != 0 || d != 0 {
				nd++
			}
			m = m*10 + uint64(d)
		default:
			exp++
			if roundDigit < 0 {
				roundDigit = d
			}
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		fd := 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			d := int(b[i] - '0')
			fd++
			if nd < 19 {
				if m != 0 || d != 0 {
					nd++
				}
				m = m*10 + uint64(d)
				exp--
			} else if roundDigit < 0 {
				roundDigit = d
			}
		}
		if fd == 0 {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		e, ed := 0, 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if e < 100000 {
				e = e*10 + int(b[i]-'0')
			}
			ed++
		}
		if ed == 0 {
			return 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(b) {
		return 0, false
	}
	if roundDigit >= 5 {
		m++
	}
	const maxI = uint64(1<<63 - 1)
	switch {
	case m == 0:
	case exp >= 0:
		for ; exp > 0; exp-- {
			if m > maxI/10 {
				return 0, false
			}
			m *= 10
		}
	case exp < -19:
		m = 0
	default:
		p := uint64(1)
		for ; exp < 0; exp++ {
			p *= 10
		}
		q, r := m/p, m%p
		if r >= p-r {
			q++
		}
		m = q
	}
	if m > maxI {
		return 0, false
	}
	if neg {
		return -int64(m), true
	}
	return int64(m), true
}

// parseInt reads an integer from number text, truncating any fraction; it
// also accepts exponents. ok is false when b is not a number or overflows.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	i := 0
	neg := false
	if b[0] == '-' {
		neg = true
		i++
	}
	var m uint64
	d := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if m > (1<<64-1)/10-1 {
			return 0, false
		}
		m = m*10 + uint64(b[i]-'0')
		d++
	}
	if d == 0 {
		return 0, false
	}
	if i < len(b) {
		if b[i] != '.' && b[i] != 'e' && b[i] != 'E' {
			return 0, false
		}
		ns, ok := parseNs(b)
		if !ok {
			return 0, false
		}
		return ns / 1000, true
	}
	if neg {
		if m > 1<<63 {
			return 0, false
		}
		return -int64(m), true
	}
	if m > 1<<63-1 {
		// uint64-sized value: keep its bits (addresses).
		return int64(m), true
	}
	return int64(m), true
}

// parseIntText parses an integer held in a string: decimal or 0x hex.
func parseIntText(b []byte) (int64, bool) {
	b = bytes.TrimSpace(b)
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		var m uint64
		for _, x := range b[2:] {
			v := hexVal(x)
			if v < 0 || m > (1<<64-1)>>4 {
				return 0, false
			}
			m = m<<4 | uint64(v)
		}
		return int64(m), true
	}
	return parseInt(b)
}
