package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLeavesOutGRPC: the tracedx binary does not link Arrow Flight,
// gRPC or protobuf (pqarrow pulled them in: 5 MB of a 43.4 MB stripped
// binary; export/internal/pqwrite writes Parquet without it). Test support
// (export/parquet/parquettest) may still use pqarrow.
func TestBinaryLeavesOutGRPC(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"cmd/tracedx").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "google.golang.org/grpc") || strings.HasPrefix(dep, "google.golang.org/protobuf") ||
			strings.Contains(dep, "arrow/flight") || strings.HasSuffix(dep, "parquet/pqarrow") {
			t.Errorf("cmd/tracedx links %s", dep)
		}
	}
}
