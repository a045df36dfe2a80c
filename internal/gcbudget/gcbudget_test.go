package gcbudget

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	const mb = 1 << 20
	cases := []struct {
		budget, live, ceiling, want int64
	}{
		{500 * mb, 100 * mb, 0, 500 * mb},           // room under the budget: the budget
		{500 * mb, 480 * mb, 0, 552 * mb},           // live data need more: live + 15%
		{500 * mb, 10 * mb, 0, 500 * mb},            // small heap
		{20 * mb, 10 * mb, 0, 42 * mb},              // at least 32 MB of headroom
		{500 * mb, 480 * mb, 520 * mb, 520 * mb},    // never above the machine's limit
		{500 * mb, 0, 0, 500 * mb},                  // before the first collection
		{500 * mb, 1100 * mb, 1200 * mb, 1200 * mb}, // capped
	}
	for _, c := range cases {
		if got := limit(c.budget, c.live, c.ceiling); got != c.want {
			t.Errorf("limit(%d MB, %d MB, %d MB) = %d MB, want %d MB", c.budget/mb, c.live/mb, c.ceiling/mb, got/mb, c.want/mb)
		}
	}
}

// A budget below the live heap is raised after a collection (else the
// collector would run back to back), and stop puts the old limit back.
func TestStartFollowsLiveHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	stop := Start(1<<20, 0, 0, nil)
	// The limit is the live heap plus the least headroom (the test's heap
	// is small), not the runtime's unlimited default.
	if got := debug.SetMemoryLimit(-1); got < minHeadroom || got > 512<<20 {
		t.Fatalf("limit at start %d: not the budget's", got)
	}
	keep := make([]byte, 96<<20) // live data far above the 1 MB budget
	for i := range keep {
		keep[i] = byte(i)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer goroutine adjusts
		if l := debug.SetMemoryLimit(-1); l >= 96<<20 && l < 1<<30 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("limit %d MB after collections with 96 MB live", debug.SetMemoryLimit(-1)>>20)
		}
	}
	runtime.KeepAlive(keep)
	stop()
	stop() // idempotent
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after stop %d, want %d", got, before)
	}
}

// Live data above the maximum call over once, with the live heap.
func TestStartCallsOverAboveMax(t *testing.T) {
	got := make(chan int64, 4)
	stop := Start(1<<20, 0, 48<<20, func(live int64) { got <- live })
	defer stop()
	keep := make([]byte, 96<<20)
	for i := range keep {
		keep[i] = byte(i)
	}
	deadline := time.After(10 * time.Second)
	for {
		runtime.GC()
		select {
		case live := <-got:
			runtime.KeepAlive(keep)
			if live < 96<<20 {
				t.Errorf("over called with %d live bytes", live)
			}
			runtime.GC()
			time.Sleep(20 * time.Millisecond)
			if len(got) != 0 {
				t.Error("over called twice")
			}
			return
		case <-deadline:
			t.Fatal("over not called with 96 MB live and a 48 MB maximum")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
