package main

import (
	"bytes"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"testing"
	"time"
)

// watchPeakHeap takes a heap profile (kept in memory) each time the live
// heap (as of the last collection, sampled every 5 ms) reaches a new high,
// 2 % above the last one, and writes the last one to path when the
// returned stop is called at the end of the run: it shows where the bytes
// were at the peak, while a profile taken after the run shows only what
// survived it.
func watchPeakHeap(tb testing.TB, path string) (stop func()) {
	tb.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		var buf bytes.Buffer
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				if peak > 0 {
					if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
						tb.Error(err)
					}
					tb.Logf("peak live heap %d MiB; profile in %s", peak>>20, path)
				}
				return
			case <-tick.C:
			}
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak+peak/50 {
				peak = v
				buf.Reset()
				if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
					tb.Error(err)
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
