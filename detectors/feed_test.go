package detectors_test

import (
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
