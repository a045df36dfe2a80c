package textdiff

import "testing"

func TestFirst(t *testing.T) {
	for _, c := range []struct{ want, got, diff string }{
		{"a\nb", "a\nb", ""},
		{"a\nb", "a\nc", "line 2:\n- b\n+ c"},
		{"a", "a\nb", "line 2:\n- \n+ b"},
		{"a", "a\n", "want has 1 lines, got 2"},
	} {
		if d := First(c.want, c.got); d != c.diff {
			t.Errorf("First(%q, %q) = %q, want %q", c.want, c.got, d, c.diff)
		}
	}
}
