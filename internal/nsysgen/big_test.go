package nsysgen

import (
	"os"
	"strconv"
	"testing"
)

// TestWriteBig writes a synthetic export with TRACEDX_GEN_NSYS_KERNELS
// kernels (and as many runtime rows) to TRACEDX_GEN_NSYS_OUT (skipped unless
// both are set): the big input of docs/performance.md.
func TestWriteBig(t *testing.T) {
	out, k := os.Getenv("TRACEDX_GEN_NSYS_OUT"), os.Getenv("TRACEDX_GEN_NSYS_KERNELS")
	if out == "" || k == "" {
		t.Skip("TRACEDX_GEN_NSYS_OUT and TRACEDX_GEN_NSYS_KERNELS not set")
	}
	n, err := strconv.Atoi(k)
	if err != nil || n <= 0 {
		t.Fatalf("bad TRACEDX_GEN_NSYS_KERNELS %q", k)
	}
	if err := Synthetic(out, n); err != nil {
		t.Fatal(err)
	}
}
