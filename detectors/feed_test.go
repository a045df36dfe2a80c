package detectors_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func TestFeedQueueAndStarvedGaps(t *testing.T) {
	b := fixture.New("x.sqlite", model.FormatNsys)
	th := b.Thread(1, "main")
	// k1 launched at 0 ([0,5) µs call), runs [10, 20).
	// k2 launched at 12, runs [30, 40): at 20 its call had returned (17), so
	// the gap [20, 30) began with work queued (a dependency wait).
	// k3 launched at 45, runs [52, 60): the gap [40, 52) began with an
	// empty queue (starved).
	b.Kernel(0, 7, "k1", 10, 20, th, 0)
	b.Kernel(0, 8, "k2", 30, 40, th, 12)
	b.Kernel(0, 7, "k3", 52, 60, th, 45)
	tr := b.Build()
	ids, by := detectors.DeviceActivities(tr)
	f := detectors.NewFeed(tr, by[ids[0]])
	if f.Linked != 3 || len(f.Gaps) != 2 || f.Busy != 28*model.Microsecond {
		t.Fatalf("feed %+v", f)
	}
	if f.Gaps[0].Queued != 1 || f.Gaps[1].Queued != 0 {
		t.Errorf("queued at gap starts: %d, %d; want 1, 0", f.Gaps[0].Queued, f.Gaps[1].Queued)
	}
	if got := f.Starved(); len(got) != 1 || got[0] != (model.Interval{Start: fixture.US(40), End: fixture.US(52)}) {
		t.Errorf("starved %v", got)
	}
	// Queue (HTA): depth 1 over [12, 30) and [45, 52) within the span [10, 60).
	if f.QueueMax != 1 || f.QueueEmpty != 25*model.Microsecond {
		t.Errorf("queue max %d, empty %v", f.QueueMax, f.QueueEmpty)
	}
	if got := f.QueueMeans([]model.Interval{{Start: fixture.US(10), End: fixture.US(30)}, {Start: fixture.US(30), End: fixture.US(60)}}); got[0] != 0.9 || got[1] != 7.0/30 {
		t.Errorf("queue means %v", got)
	}
	x := detectors.NewIdleIndex(tr)
	pid := tr.Thread(th).PID
	if !x.Measurable || x.GPUIdle(pid, fixture.US(0), fixture.US(100)) != 12*model.Microsecond || x.GPUIdle(pid, fixture.US(20), fixture.US(30)) != 0 {
		t.Errorf("GPU idle with an empty queue: %v, %v", x.GPUIdle(pid, fixture.US(0), fixture.US(100)), x.GPUIdle(pid, fixture.US(20), fixture.US(30)))
	}
}

// A gap that began starved but whose next kernel was submitted early (it then
// waited on an event or another stream) is starved only until the
// submission; a submission late in the gap is the launch that ends it.
func TestStarvedStopsAtEarlySubmission(t *testing.T) {
	b := fixture.New("x.sqlite", model.FormatNsys)
	th := b.Thread(1, "main")
	// k2's call [22, 27) returns 7 µs into the gap [20, 100): dependency wait.
	// k3's call [150, 155) returns 45 µs into the gap [110, 158): launch-bound.
	b.Kernel(0, 7, "k1", 10, 20, th, 0)
	b.Kernel(0, 7, "k2", 100, 110, th, 22)
	b.Kernel(0, 7, "k3", 158, 170, th, 150)
	tr := b.Build()
	ids, by := detectors.DeviceActivities(tr)
	f := detectors.NewFeed(tr, by[ids[0]])
	if len(f.Gaps) != 2 || f.Gaps[0].Queued != 0 || f.Gaps[1].Queued != 0 {
		t.Fatalf("gaps %+v", f.Gaps)
	}
	want := []model.Interval{{Start: fixture.US(20), End: fixture.US(27)}, {Start: fixture.US(110), End: fixture.US(158)}}
	got := f.Starved()
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("starved %v, want %v", got, want)
	}
}

// The feed reads its queue times from the activities instead of keeping
// sorted copies; it must give what sorted copies give, also when launches
// come out of start order (two streams, calls after their kernels).
func TestFeedMatchesSortedTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		b := fixture.New("x.sqlite", model.FormatNsys)
		th := b.Thread(1, "main")
		at := 0.0
		for range 300 {
			at += float64(rng.IntN(30))
			dur := float64(1 + rng.IntN(20))
			// Launches up to 60 µs before the start, some after it (unlinked).
			launch := at - float64(rng.IntN(70)) + 5
			b.Kernel(0, model.StreamID(1+rng.IntN(2)), "k", at, at+dur, th, launch)
		}
		tr := b.Build()
		ids, by := detectors.DeviceActivities(tr)
		acts := by[ids[0]]
		f := detectors.NewFeed(tr, acts)
		var launchAt, submitAt, startAt []model.Time
		for i := range acts.Len() {
			a := acts.At(i)
			if a.Launch < 0 {
				continue
			}
			c := tr.APICalls[a.Launch]
			if c.Start > a.Start {
				continue
			}
			launchAt = append(launchAt, c.Start)
			submitAt = append(submitAt, min(c.End, a.Start))
			startAt = append(startAt, a.Start)
		}
		slices.Sort(launchAt)
		slices.Sort(submitAt)
		if f.Linked != len(startAt) || f.Linked == acts.Len() || f.Linked == 0 {
			t.Fatalf("round %d: linked %d of %d, want %d (and some unlinked)", round, f.Linked, acts.Len(), len(startAt))
		}
		// Queued and Fed of each gap, as counted on sorted copies.
		for _, g := range f.Gaps {
			launched, _ := slices.BinarySearch(submitAt, g.Start+1)
			started, _ := slices.BinarySearch(startAt, g.Start+1)
			fed := g.End
			if launched < len(submitAt) {
				fed = min(g.End, submitAt[launched])
			}
			if want := int32(max(0, launched-started)); g.Queued != want || g.Fed != fed {
				t.Fatalf("round %d: gap %v: queued %d fed %v, want %d %v", round, g.Interval, g.Queued, g.Fed, want, fed)
			}
		}
		// The queue's depth, changed by every launch (+1) and start (-1).
		depth, deepest := 0, 0
		i, j := 0, 0
		for i < len(startAt) || j < len(launchAt) {
			if j >= len(launchAt) || (i < len(startAt) && startAt[i] <= launchAt[j]) {
				depth--
				i++
			} else {
				depth++
				j++
			}
			deepest = max(deepest, depth)
		}
		if f.QueueMax != deepest {
			t.Fatalf("round %d: queue max %d, want %d", round, f.QueueMax, deepest)
		}
		whole := f.QueueMeans([]model.Interval{f.Span})
		if math.Abs(whole[0]-f.QueueMean) > 1e-9*max(1, f.QueueMean) {
			t.Fatalf("round %d: queue mean over the span %v, QueueMeans %v", round, f.QueueMean, whole[0])
		}
	}
}
