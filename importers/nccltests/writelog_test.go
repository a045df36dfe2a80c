package nccltests

import (
	"os"
	"strconv"
	"testing"
)

// TestWriteBenchLog writes a generated log of TRACEDX_NCCL_LOG_MB megabytes
// to TRACEDX_NCCL_LOG_OUT (skipped unless both are set), to measure the
// whole tracedx on it (docs/performance.md).
func TestWriteBenchLog(t *testing.T) {
	out, mb := os.Getenv("TRACEDX_NCCL_LOG_OUT"), os.Getenv("TRACEDX_NCCL_LOG_MB")
	if out == "" || mb == "" {
		t.Skip("TRACEDX_NCCL_LOG_OUT and TRACEDX_NCCL_LOG_MB not set")
	}
	n, err := strconv.Atoi(mb)
	if err != nil || n <= 0 {
		t.Fatalf("bad TRACEDX_NCCL_LOG_MB %q", mb)
	}
	if err := writeBenchFile(out, int64(n)<<20); err != nil {
		t.Fatal(err)
	}
}
