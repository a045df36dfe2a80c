// Package tracejson holds the primitives of the Chrome trace-event JSON that
// tracedx writes: export/perfetto (the Perfetto export) and
// internal/kinetogen (Kineto test fixtures) both encode through it, so that
// string escaping and the ns → µs conversion exist once.
package tracejson

import (
	"strconv"
	"unicode/utf8"
)

// AppendMicros appends ns as microseconds with exactly three decimals
// ("-1.500" for -1500), exact for every int64 (MinInt64 included): trace
// viewers read ts and dur as µs, and going through a float64 would lose
// nanoseconds at epoch scale.
func AppendMicros(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = uint64(-ns) // two's complement: correct for MinInt64 too
	}
	b = strconv.AppendUint(b, u/1000, 10)
	f := u % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string: control characters, quotes and
// backslashes escaped, U+2028/U+2029 escaped (JavaScript line ends), and
// invalid UTF-8 replaced by U+FFFD, so the output is always valid JSON.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendWholeMicros appends ns as whole microseconds, truncated toward zero
// (the integer ts of old Kineto files).
func AppendWholeMicros(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = uint64(-ns)
	}
	return strconv.AppendUint(b, u/1000, 10)
}
