package perfetto

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// TestLongNamesShortened: a long kernel name launched many times made the
// export huge (5 MB names: 26 GB); names are cut with the reports'
// function (length and hash kept), the cap follows MaxNameBytes.
func TestLongNamesShortened(t *testing.T) {
	long := "void big_kernel<" + strings.Repeat("T", 1<<18) + ">"
	b := fixture.New("long-names.json", model.FormatKineto)
	th := b.Thread(7, "main")
	for i := range 50 {
		b.Kernel(0, 7, long, float64(i*10), float64(i*10+5), th, float64(i*10)-1)
	}
	set := fixture.Set(b.T)
	for _, tc := range []struct {
		max      int
		whole    bool
		maxBytes int
	}{{0, false, 1 << 20}, {128, false, 1 << 20}, {-1, true, 20 << 20}} {
		out := write(t, set, Options{MaxNameBytes: tc.max})
		decode(t, out) // still valid JSON
		if got := bytes.Contains(out, []byte(long)); got != tc.whole {
			t.Errorf("cap %d: whole name written = %v", tc.max, got)
		}
		if !tc.whole && !bytes.Contains(out, []byte("…[262161 bytes, sha256 ")) {
			t.Errorf("cap %d: no shortened name", tc.max)
		}
		if len(out) > tc.maxBytes {
			t.Errorf("cap %d: %d bytes of output, want at most %d", tc.max, len(out), tc.maxBytes)
		}
	}
}
