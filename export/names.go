package export

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultMaxNameBytes bounds the names (kernels, ranges, ops, files)
// written into reports and Perfetto traces unless --max-name-bytes says
// otherwise (an 82 MB export with 5 MB kernel names made 26 GB of JSON).
const DefaultMaxNameBytes = 4096

// ShortenName cuts a name longer than maxBytes and tags it with its length
// and a hash of the whole name, so that two long names stay distinct and
// the result is at most maxBytes long (at least 16 bytes of the name are
// kept). maxBytes <= 0 means no cap. Reports and Perfetto output share it.
func ShortenName(s string, maxBytes int) string {
	if maxBytes <= 0 || len(s) <= maxBytes {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	tag := fmt.Sprintf("…[%d bytes, sha256 %s]", len(s), hex.EncodeToString(sum[:6]))
	cut := max(maxBytes-len(tag), 16)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + tag
}

// names is a renderer's name cap (0: none); its methods escape names and
// text for one output format.
type names int

// short applies the cap.
func (n names) short(s string) string { return ShortenName(s, int(n)) }

// text makes s safe for a terminal: the name cap, then every control
// character (C0, DEL, C1: ESC, NUL, CR, newline, …) and every invalid UTF-8
// byte written as a visible Go-style escape (\x1b, \n, \r, \x00).
func (n names) text(s string) string {
	s = n.short(s)
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

// code writes s as a Markdown code span safe in a table cell: the name cap,
// control characters escaped, a fence of one backtick more than the longest
// backtick run inside, a space inside the fence when s starts or ends with
// a backtick (or a space), and pipes escaped (GFM splits table cells on a
// pipe even inside a code span; "\|" renders as "|" there).
func (n names) code(s string) string {
	s = n.text(s)
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

// md makes free text safe in Markdown outside code spans: control
// characters escaped, HTML-significant characters as entities (so no name or
// message becomes markup: `</details><script>` stays text), backticks,
// pipes and other inline markup characters backslash-escaped.
func (n names) md(s string) string {
	s = n.text(s)
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
