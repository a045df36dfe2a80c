package joblog

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tracedx/tracedx/importers"
)

// writeBig writes a log of about size bytes mixing every grammar (the
// fixtures, repeated) to a file under dir.
func writeBig(tb testing.TB, dir string, size int64) string {
	tb.Helper()
	path := filepath.Join(dir, "big-joblog.log")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var block strings.Builder
	for _, name := range []string{"nccl-3host-mixed", "c10d-midrun-hang", "vllm-v0", "vllm-v1-docker", "sglang-trtllm", "tgi"} {
		block.WriteString(fixtures[name]())
	}
	b := block.String()
	var n int64
	for n < size {
		k, _ := w.WriteString(b)
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path
}

// BenchmarkParseBig imports a generated log of 64 MB (in a temporary
// folder, never committed) and reports the peak heap: memory stays bounded
// (stats decimated, events capped) whatever the size.
func BenchmarkParseBig(b *testing.B) {
	path := writeBig(b, b.TempDir(), 32<<20)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var peak uint64
		done := make(chan struct{})
		go func() {
			var ms runtime.MemStats
			for {
				select {
				case <-done:
					return
				default:
				}
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak {
					peak = ms.HeapInuse
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		tr, err := New().Import(context.Background(), path, importers.Options{})
		close(done)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(len(tr.JobLog.Stats)), "stats-kept")
		b.ReportMetric(float64(len(tr.JobLog.Requests)), "requests-kept")
	}
}
