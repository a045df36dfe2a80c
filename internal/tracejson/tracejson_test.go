package tracejson

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestMicros(t *testing.T) {
	for ns, want := range map[int64]string{0: "0.000", 1: "0.001", 999: "0.999", 1000: "1.000", 1234567: "1234.567",
		-1: "-0.001", -1500: "-1.500", 1700000000123456789: "1700000000123456.789",
		math.MinInt64: "-9223372036854775.808"} {
		if got := string(AppendMicros(nil, ns)); got != want {
			t.Errorf("AppendMicros(%d) = %s, want %s", ns, got, want)
		}
	}
}

func TestString(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x1f\t\n\r", "ünïcødé → 漢字", "bad\xffutf8", "sep\u2028\u2029", "void at::native::(anonymous namespace)::f<float>"} {
		b := AppendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Errorf("%q → %s: %v", s, b, err)
			continue
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if got != want {
			t.Errorf("%q → %s → %q", s, b, got)
		}
	}
}

// FuzzAppendString checks that every string becomes valid JSON that decodes
// to the string with invalid UTF-8 replaced.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\x1f\u2028", "bad\xff", "漢字"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := AppendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q → %s: %v", s, b, err)
		}
		if want := strings.ToValidUTF8(s, "\ufffd"); got != want {
			// ToValidUTF8 folds a run of bad bytes into one replacement; we
			// replace each byte. Compare with runs folded.
			if strings.ToValidUTF8(got, "\ufffd") != want && foldFFFD(got) != foldFFFD(want) {
				t.Fatalf("%q → %s → %q", s, b, got)
			}
		}
	})
}

func foldFFFD(s string) string {
	for strings.Contains(s, "\ufffd\ufffd") {
		s = strings.ReplaceAll(s, "\ufffd\ufffd", "\ufffd")
	}
	return s
}

func TestWholeMicros(t *testing.T) {
	for ns, want := range map[int64]string{0: "0", 999: "0", 1500: "1", -1500: "-1", math.MinInt64: "-9223372036854775"} {
		if got := string(AppendWholeMicros(nil, ns)); got != want {
			t.Errorf("AppendWholeMicros(%d) = %s, want %s", ns, got, want)
		}
	}
}
