package html

import (
	"regexp"
	"strings"
	"testing"
)

// TestPaletteDistinct: in the light and the dark theme, every class that
// marks data has its own colour (two causes sharing one would be told apart
// by their labels only).
func TestPaletteDistinct(t *testing.T) {
	light, dark, ok := strings.Cut(css, "@media (prefers-color-scheme:dark)")
	if !ok {
		t.Fatal("no dark theme in the CSS")
	}
	re := regexp.MustCompile(`--(compute|comm|memory|idle|other|sync|memcpy|launch):(#[0-9A-Fa-f]{6})`)
	for name, block := range map[string]string{"light": light, "dark": dark} {
		seen := map[string]string{}
		for _, m := range re.FindAllStringSubmatch(block, -1) {
			c := strings.ToLower(m[2])
			if other, dup := seen[c]; dup {
				t.Errorf("%s theme: --%s and --%s are both %s", name, other, m[1], c)
			}
			seen[c] = m[1]
		}
		if len(seen) != 8 {
			t.Errorf("%s theme: %d data colours, want 8", name, len(seen))
		}
	}
}
