package nsys

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/nsysgen"
)

// BenchmarkImport imports a synthetic export with 2 million kernels and their
// cudaLaunchKernel rows (TRACEDX_NSYS_BENCH_KERNELS overrides the count),
// generated in a temporary folder at benchmark time. It reports kernel rows
// per second into the model and the peak Go heap during the import.
func BenchmarkImport(b *testing.B) {
	n := 2_000_000
	if s := os.Getenv("TRACEDX_NSYS_BENCH_KERNELS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("bad TRACEDX_NSYS_BENCH_KERNELS %q", s)
		}
		n = v
	}
	path := filepath.Join(b.TempDir(), "synthetic.sqlite")
	if err := nsysgen.Synthetic(path, n); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.ResetTimer()
	var peak uint64
	var live uint64
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		stop := watchHeap(&peak)
		c0 := cpuTime()
		b.StartTimer()
		tr, err := New().Import(context.Background(), path, importers.Options{})
		b.StopTimer()
		cpu += cpuTime() - c0
		stop()
		if err != nil {
			b.Fatal(err)
		}
		if len(tr.Kernels) != n || len(tr.APICalls) != n {
			b.Fatalf("imported %d kernels, %d API calls; want %d", len(tr.Kernels), len(tr.APICalls), n)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live = ms.HeapAlloc
		runtime.KeepAlive(tr)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "kernels/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(live)/(1<<20), "model-heap-MiB")
	b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n)/float64(b.N), "cpu-ns/kernel")
}

// cpuTime is the process's user + system CPU time (all threads), which the
// machine's load does not inflate the way it does wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// watchHeap samples the live heap every 5 ms into *peak until stopped.
func watchHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > *peak {
			*peak = v
		}
	}
	go func() {
		defer wg.Done()
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				read()
				return
			case <-tk.C:
				read()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
