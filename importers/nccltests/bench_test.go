package nccltests

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/tracedx/tracedx/importers"
)

// benchLog builds a log of about size bytes: many runs of all five common
// collectives, each with INFO lines and 2.17-style tables.
func benchLog(size int) []byte {
	var out bytes.Buffer
	writeBenchLog(&out, int64(size))
	return out.Bytes()
}

// writeBenchLog writes such a log of at least size bytes to w, one block of
// runs at a time, so that a 1 GB log never sits in memory.
func writeBenchLog(w io.Writer, size int64) error {
	hosts := []string{"node-a", "node-b"}
	var n int64
	for i := 0; n < size; i++ {
		g := &gen{}
		if i%10 == 0 {
			g.infoBlock(hosts, 4, "IB", true, 1)
		}
		for _, prog := range []string{"all_reduce_perf", "all_gather_perf", "reduce_scatter_perf", "alltoall_perf", "sendrecv_perf"} {
			g.run(runSpec{prog: prog, version: "2.17.8", start: true, hosts: hosts, gpusPer: 4, gpu: "NVIDIA H100 80GB HBM3",
				minB: 8, maxB: 1 << 33, dtype: "float", redop: "sum", root: -1, peak: 180 + float64(i%7), lat: 20})
		}
		k, err := io.WriteString(w, g.String())
		if err != nil {
			return err
		}
		n += int64(k)
	}
	return nil
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

// BenchmarkImportBig imports a generated log of TRACEDX_NCCL_BENCH_MB
// megabytes (default 1024) from a temporary file and reports the heap the
// model keeps: repeated runs are merged, so it stays a few MB whatever the
// size (docs/performance.md).
func BenchmarkImportBig(b *testing.B) {
	mb := 1024
	if s := os.Getenv("TRACEDX_NCCL_BENCH_MB"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("bad TRACEDX_NCCL_BENCH_MB %q", s)
		}
		mb = v
	}
	path := filepath.Join(b.TempDir(), "big.log")
	if err := writeBenchFile(path, int64(mb)<<20); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	var live uint64
	for i := 0; i < b.N; i++ {
		tr, err := New().Import(context.Background(), path, importers.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live = ms.HeapAlloc
		runtime.KeepAlive(tr)
		b.StartTimer()
	}
	b.ReportMetric(float64(live)/(1<<20), "model-heap-MiB")
}

// writeBenchFile writes a generated log of at least size bytes to path.
func writeBenchFile(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := writeBenchLog(w, size); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
