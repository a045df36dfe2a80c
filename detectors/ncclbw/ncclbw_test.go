package ncclbw

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/nccltests"
	"github.com/tracedx/tracedx/model"
)

// logText writes a small nccl-tests 2.17-style log: one run of prog on
// hosts x gpusPer GPUs of the given model, sizes from 1 MiB to maxB, with
// busbw(size) for the out-of-place half and ipScale x that for in-place.
func logText(prog, gpu string, hosts []string, gpusPer int, maxB int64, busbw func(int64) float64, ipScale float64, smallUS float64) string {
	var b strings.Builder
	n := len(hosts) * gpusPer
	fmt.Fprintf(&b, "# Collective test starting: %s\n", prog)
	fmt.Fprintf(&b, "# nThread 1 nGpus 1 minBytes 8 maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n", maxB)
	r := 0
	for _, h := range hosts {
		for d := 0; d < gpusPer; d++ {
			fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:%02x:00] %s\n", r, 100+r, h, d, d+1, gpu)
			r++
		}
	}
	f := 2 * float64(n-1) / float64(n)
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n")
	half := func(size int64, bus float64) string {
		alg := bus / f
		t := float64(size) / alg / 1e3
		return fmt.Sprintf("  %8.2f  %7.2f  %7.2f  %6d", t, alg, bus, 0)
	}
	for size := int64(8); size <= maxB; size *= 2 {
		if size < 1<<20 && size != 8 {
			continue
		}
		bus := busbw(size)
		if size == 8 {
			alg := float64(size) / smallUS / 1e3
			fmt.Fprintf(&b, "%12d  %12d  %8s  %6s  %6d  %8.2f  %7.2f  %7.2f  %6d  %8.2f  %7.2f  %7.2f  %6d\n", size, size/4, "float", "sum", -1, smallUS, alg, alg*f, 0, smallUS, alg, alg*f, 0)
			continue
		}
		fmt.Fprintf(&b, "%12d  %12d  %8s  %6s  %6d%s%s\n", size, size/4, "float", "sum", -1, half(size, bus), half(size, bus*ipScale))
	}
	b.WriteString("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1 \n#\n")
	fmt.Fprintf(&b, "# Collective test concluded: %s\n", prog)
	return b.String()
}

func analyze(t *testing.T, text string) detectors.Result {
	t.Helper()
	tr, err := nccltests.Parse(strings.NewReader(text), "fixture.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{Detector}, detectors.Config{})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	return res
}

// healthy 8xH100 NVLink ring: ~368 GB/s plateau (82% of 450).
func healthy(size int64) float64 {
	if size >= 256<<20 {
		return 368
	}
	return 368 * float64(size) / float64(size+(32<<20))
}

func TestClean(t *testing.T) {
	text := logText("all_reduce_perf", "NVIDIA H100 80GB HBM3", []string{"node-a"}, 8, 8<<30, healthy, 1.0, 18)
	res := analyze(t, text)
	// A healthy run gets one info finding saying what the fabric should give
	// and that it is reached; nothing else.
	if len(res.Findings) != 1 || res.Findings[0].Severity != model.SevInfo {
		for _, f := range res.Findings {
			t.Errorf("unexpected finding: %s %s", f.Severity, f.Message)
		}
		return
	}
	if m, _ := res.Findings[0].Metric("plateau_ratio"); m.Value < 0.8 {
		t.Errorf("healthy run at ratio %v", m.Value)
	}
}

func TestPlanted(t *testing.T) {
	low := func(size int64) float64 {
		v := healthy(size) * 0.4 // PCIe-like plateau on an NVLink box
		if size == 64<<20 {
			v *= 0.5 // a dip at 64 MiB that recovers
		}
		return v
	}
	text := logText("all_reduce_perf", "NVIDIA H100 80GB HBM3", []string{"node-a"}, 8, 8<<30, low, 0.6, 120)
	res := analyze(t, text)
	got := map[string]*model.Finding{}
	for i := range res.Findings {
		f := &res.Findings[i]
		got[f.Title] = f
		if _, ok := f.Metric("plateau_ratio"); ok && f.Severity == model.SevWarning {
			got["plateau"] = f
		}
	}
	plateau := got["plateau"]
	if plateau == nil {
		t.Fatalf("no plateau finding: %+v", res.Findings)
	}
	if m, _ := plateau.Metric("plateau_busbw"); m.Value < 147 || m.Value > 148 {
		t.Errorf("plateau %v, want 147.2", m.Value)
	}
	if m, _ := plateau.Metric("expected_busbw"); m.Value != 450 {
		t.Errorf("expected %v, want 450", m.Value)
	}
	if !strings.Contains(plateau.Message, "147.20 GB/s") || !strings.Contains(plateau.Message, "33%") {
		t.Errorf("message lacks numbers: %s", plateau.Message)
	}
	if f := got["nccl-tests busbw dips at some message sizes"]; f == nil || !strings.Contains(f.Message, "64 MiB") {
		t.Errorf("dip not found: %+v", f)
	}
	if f := got["nccl-tests in-place and out-of-place bandwidth differ"]; f == nil {
		t.Error("in-place gap not found")
	}
	if f := got["nccl-tests small-message latency is high"]; f == nil || !strings.Contains(f.Message, "120.00 us") {
		t.Errorf("latency not found: %+v", f)
	}
}

// TestInterNode checks the inter-node reference: 2 nodes x 8 H100 on an
// assumed NDR network expect min(450, 50 x 8) = 400 GB/s.
func TestInterNode(t *testing.T) {
	r := &model.BenchRun{Collective: "all_reduce", Ranks: 16, Nodes: 2, GPU: "NVIDIA H100 80GB HBM3"}
	e, ok := ExpectedFor(DefaultTable(), r, &model.NCCLFacts{})
	if !ok || e.GBps != 400 || !e.Assumed {
		t.Errorf("expected %+v %v", e, ok)
	}
	r.Collective = "alltoall"
	e, _ = ExpectedFor(DefaultTable(), r, &model.NCCLFacts{Network: "IB"})
	if e.GBps != 50*15.0/8 || e.Assumed {
		t.Errorf("alltoall expected %+v", e)
	}
	r = &model.BenchRun{Collective: "all_reduce", Ranks: 16, Nodes: 2, GPU: "A100-SXM4-40GB"}
	e, _ = ExpectedFor(DefaultTable(), r, &model.NCCLFacts{Network: "AWS Libfabric", OFIProvider: "efa"})
	if e.GBps != 50 {
		t.Errorf("p4d expected %+v", e)
	}
	custom := Table{Links: map[string]Link{"x": {Name: "x", GBps: 10}}, GPUs: []GPUFabric{{Match: "h100", Intra: "x"}}}
	e, ok = ExpectedFor(custom, &model.BenchRun{Collective: "all_reduce", Ranks: 8, Nodes: 1, GPU: "NVIDIA H100 80GB HBM3"}, nil)
	if !ok || e.GBps != 10 {
		t.Errorf("override table: %+v", e)
	}
}
