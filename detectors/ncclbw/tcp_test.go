package ncclbw

import (
	"strings"
	"testing"
)

func titles(t *testing.T, text string) string {
	t.Helper()
	var out []string
	for _, f := range analyze(t, text).Findings {
		out = append(out, f.Severity.String()+": "+f.Title)
	}
	return strings.Join(out, "\n")
}

// TestTCPFallbackSignature: 2 nodes, 45 µs small messages, 9 GB/s ceiling is
// NCCL's socket transport; the same run at RDMA latency and rate is not.
func TestTCPFallbackSignature(t *testing.T) {
	hosts := []string{"node-a", "node-b"}
	slow := logText("all_reduce_perf", "NVIDIA A100-SXM4-40GB", hosts, 4, 1<<30, func(int64) float64 { return 9 }, 1, 45)
	if got := titles(t, slow); !strings.Contains(got, "TCP-socket fallback signature: 45 us") {
		t.Errorf("TCP signature not named:\n%s", got)
	}
	fast := logText("all_reduce_perf", "NVIDIA A100-SXM4-40GB", hosts, 4, 1<<30, func(int64) float64 { return 80 }, 1, 12)
	if got := titles(t, fast); strings.Contains(got, "TCP") {
		t.Errorf("RDMA-speed run flagged as TCP:\n%s", got)
	}
	// One node: sockets are not involved.
	one := logText("all_reduce_perf", "NVIDIA A100-SXM4-40GB", hosts[:1], 4, 1<<30, func(int64) float64 { return 9 }, 1, 45)
	if got := titles(t, one); strings.Contains(got, "TCP") {
		t.Errorf("single node flagged as TCP:\n%s", got)
	}
}

// TestSlingshotFromCrayHostNames: HPE Cray EX host names mean Slingshot, not
// the GPU platform's usual InfiniBand.
func TestSlingshotFromCrayHostNames(t *testing.T) {
	hosts := []string{"x3006c0s1b1n0", "x3006c0s25b0n0"}
	text := logText("all_reduce_perf", "NVIDIA A100-SXM4-40GB", hosts, 4, 1<<30, func(int64) float64 { return 36 }, 1, 22)
	got := titles(t, text)
	if !strings.Contains(got, "Slingshot") || strings.Contains(got, "InfiniBand") || !strings.HasPrefix(got, "info") {
		t.Errorf("want a healthy Slingshot-based verdict:\n%s", got)
	}
}
