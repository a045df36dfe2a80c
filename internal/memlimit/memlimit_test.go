package memlimit

import (
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	t.Setenv("GOMEMLIMIT", "")
	got := Apply()
	if a := available(); a > 0 {
		if got <= 0 || got > a {
			t.Errorf("limit %d with %d bytes available", got, a)
		}
		if cur := debug.SetMemoryLimit(-1); cur != got {
			t.Errorf("runtime limit %d, want %d", cur, got)
		}
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := Apply(); got != 0 {
		t.Errorf("GOMEMLIMIT set: Apply set %d", got)
	}
}
