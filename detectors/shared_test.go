package detectors_test

import (
	"reflect"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// The activity lists and the idle index are made once per trace and handed
// to every caller, and made again when the trace's tables change.
func TestSharedPerTraceUntilTablesChange(t *testing.T) {
	b := fixture.New("x.sqlite", model.FormatNsys)
	th := b.Thread(1, "main")
	b.Kernel(0, 7, "k1", 10, 20, th, 0)
	b.Kernel(0, 7, "k2", 30, 40, th, 25)
	tr := b.Build()
	ids, by := detectors.DeviceActivities(tr)
	_, again := detectors.DeviceActivities(tr)
	if reflect.ValueOf(by).Pointer() != reflect.ValueOf(again).Pointer() || detectors.NewIdleIndex(tr) != detectors.NewIdleIndex(tr) {
		t.Fatal("a second call made the lists or the index again")
	}
	if n := by[ids[0]].Len(); n != 2 {
		t.Fatalf("%d activities, want 2", n)
	}
	idle := detectors.NewIdleIndex(tr)
	k := tr.Kernels[1]
	k.Start, k.End = k.Start+fixture.US(100), k.End+fixture.US(100)
	tr.Kernels = append(tr.Kernels, k)
	ids, by = detectors.DeviceActivities(tr)
	if n := by[ids[0]].Len(); n != 3 {
		t.Errorf("after a kernel was added: %d activities, want 3", n)
	}
	if detectors.NewIdleIndex(tr) == idle {
		t.Error("after a kernel was added: the old idle index")
	}
}
