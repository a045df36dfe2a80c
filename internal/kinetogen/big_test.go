package kinetogen

import (
	"os"
	"strconv"
	"testing"
)

// TestWriteBig replicates the Kineto trace TRACEDX_GEN_KINETO_SRC into
// TRACEDX_GEN_KINETO_OUT until it holds TRACEDX_GEN_KINETO_MB megabytes
// (skipped unless all are set): the big input of docs/performance.md.
func TestWriteBig(t *testing.T) {
	src, out, mb := os.Getenv("TRACEDX_GEN_KINETO_SRC"), os.Getenv("TRACEDX_GEN_KINETO_OUT"), os.Getenv("TRACEDX_GEN_KINETO_MB")
	if src == "" || out == "" || mb == "" {
		t.Skip("TRACEDX_GEN_KINETO_SRC, _OUT and _MB not set")
	}
	n, err := strconv.ParseInt(mb, 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("bad TRACEDX_GEN_KINETO_MB %q", mb)
	}
	if err := Replicate(src, out, n<<20); err != nil {
		t.Fatal(err)
	}
}
