package export

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxNameBytes bounds the names (kernels, ranges, ops, files) written into
// reports: a longer name is cut and tagged with a hash of the whole name so
// that two long names stay distinguishable. 0 or less turns the cap off.
// The CLI sets it from --max-name-bytes.
var MaxNameBytes = 4096

// shorten applies MaxNameBytes.
func shorten(s string) string {
	if MaxNameBytes <= 0 || len(s) <= MaxNameBytes {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	tag := fmt.Sprintf("…[%d bytes, sha256 %s]", len(s), hex.EncodeToString(sum[:6]))
	cut := max(MaxNameBytes-len(tag), 16)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + tag
}

// textSafe makes s safe for a terminal: the name cap, then every control
// character (C0, DEL, C1: ESC, NUL, CR, newline, …) and every invalid UTF-8
// byte written as a visible Go-style escape (\x1b, \n, \r, \x00).
func textSafe(s string) string {
	s = shorten(s)
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || isControl(r) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029
}

// mdCode writes s as a Markdown code span safe in a table cell: the name cap,
// control characters escaped, a fence of one backtick more than the longest
// backtick run inside, a space inside the fence when s starts or ends with
// a backtick (or a space), and pipes escaped (GFM splits table cells on a
// pipe even inside a code span; "\|" renders as "|" there).
func mdCode(s string) string {
	s = textSafe(s)
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	s = strings.ReplaceAll(s, "|", `\|`)
	if s == "" {
		return fence + " " + fence
	}
	if s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' || s[len(s)-1] == ' ' {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdText makes free text safe in Markdown outside code spans: control
// characters escaped, HTML-significant characters as entities (so no name or
// message becomes markup: `</details><script>` stays text), backticks,
// pipes and other inline markup characters backslash-escaped.
func mdText(s string) string {
	s = textSafe(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '|', '`', '*', '_', '[', ']', '\\', '#', '~':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
