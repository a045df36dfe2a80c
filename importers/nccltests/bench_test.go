package nccltests

import (
	"bytes"
	"testing"

	"github.com/tracedx/tracedx/importers"
)

// benchLog builds a log of about size bytes: many runs of all five common
// collectives, each with INFO lines and 2.17-style tables.
func benchLog(size int) []byte {
	var out bytes.Buffer
	hosts := []string{"node-a", "node-b"}
	for i := 0; out.Len() < size; i++ {
		g := &gen{}
		if i%10 == 0 {
			g.infoBlock(hosts, 4, "IB", true, 1)
		}
		for _, prog := range []string{"all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "alltoall_perf", "sendrecv_perf"} {
			g.run(runSpec{prog: prog, version: "2.17.8", start: true, hosts: hosts, gpusPer: 4, gpu: "NVIDIA H100 80GB HBM3",
				minB: 8, maxB: 1 << 33, dtype: "float", redop: "sum", root: -1, peak: 180 + float64(i%7), lat: 20})
		}
		out.WriteString(g.String())
	}
	return out.Bytes()
}

// BenchmarkParse parses a generated ~100 MB log (built here, not committed).
func BenchmarkParse(b *testing.B) {
	data := benchLog(100 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr, err := Parse(bytes.NewReader(data), "bench.log", importers.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(tr.Bench.Runs) == 0 {
			b.Fatal("no runs")
		}
	}
}
