package nccltests

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/model"
)

// repeatedLog prints runs all_reduce runs; vary > 0 makes vary distinct
// benchmarks (maxBytes), vary < 0 makes every run distinct (minBytes).
func repeatedLog(runs, vary, failAt int) string {
	g := &gen{}
	hosts := []string{"node-a"}
	for i := 0; i < runs; i++ {
		minB, maxB := int64(8), int64(1<<20)
		if vary > 0 {
			maxB <<= uint(i % vary)
		}
		if vary < 0 {
			minB += 8 * int64(i)
		}
		g.run(runSpec{prog: "all_reduce_perf", start: true, hosts: hosts, gpusPer: 2, gpu: "NVIDIA H100 80GB HBM3",
			minB: minB, maxB: maxB, dtype: "float", redop: "sum", root: -1, peak: 100 + float64(i%2)*20, lat: 10})
		if i == failAt {
			g.ln("node-a: Test NCCL failure common.cu:1204 'unhandled system error'")
		}
	}
	return g.String()
}

func TestMergeRepeatedRuns(t *testing.T) {
	tr, err := Parse(strings.NewReader(repeatedLog(mergeAfter+100, 0, 40)), "rep.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := tr.Bench
	// One merged run, the run followed by a failure line kept apart, and
	// the runs read before it merged with the first.
	if len(b.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(b.Runs))
	}
	if got := b.Runs[0].Repeats + b.Runs[1].Repeats; got != mergeAfter+99 {
		t.Errorf("repeats %d+%d, want %d", b.Runs[0].Repeats, b.Runs[1].Repeats, mergeAfter+99)
	}
	if len(b.Failures) != 1 || b.Failures[0].Run != 1 {
		t.Errorf("failures %+v, want one in run 1", b.Failures)
	}
	row := b.Runs[0].Rows[len(b.Runs[0].Rows)-1]
	if bw := row.OutOfPlace.AlgBWGBps; bw < 52 || bw > 55 { // 51.2 and 56.0 GB/s alternate
		t.Errorf("merged algbw %v, want their mean", bw)
	}
	if !hasWarning(tr.Warnings, "repeated runs were merged") {
		t.Errorf("no merge warning in %q", tr.Warnings)
	}
}

func TestDistinctRunsCapped(t *testing.T) {
	tr, err := Parse(strings.NewReader(repeatedLog(mergeAfter*3, 12, -1)), "some.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 12 distinct benchmarks: everything merges into them.
	if len(tr.Bench.Runs) != 12 {
		t.Fatalf("%d runs, want 12", len(tr.Bench.Runs))
	}
	tr, err = Parse(strings.NewReader(repeatedLog(maxRuns+50, -1, -1)), "many.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tr.Bench.Runs); n != maxRuns {
		t.Errorf("%d runs kept, want %d", n, maxRuns)
	}
	if !hasWarning(tr.Warnings, "further runs") {
		t.Errorf("no warning about dropped runs")
	}
}

func hasWarning(ws []model.Warning, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w.Message, sub) {
			return true
		}
	}
	return false
}

func TestSizeOverflowWarns(t *testing.T) {
	log := repeatedLog(1, 0, -1)
	i := strings.Index(log, "\n           8 ")
	log = log[:i+1] + "18446744073709551616" + log[i+13:]
	tr, err := Parse(strings.NewReader(log), "ovf.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(tr.Warnings, "does not fit in 63 bits") {
		t.Errorf("overflowing size row dropped without a warning: %v", tr.Warnings)
	}
}
