package gilstall

import (
	"reflect"
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func iv(s, e float64) model.Interval { return model.Interval{Start: fixture.US(s), End: fixture.US(e)} }

func TestMergeSorted(t *testing.T) {
	merged := mergeSorted([]model.Interval{iv(0, 1), iv(4, 5)}, []model.Interval{iv(2, 3), iv(4, 6), iv(7, 8)})
	if want := []model.Interval{iv(0, 1), iv(2, 3), iv(4, 5), iv(4, 6), iv(7, 8)}; !reflect.DeepEqual(merged, want) {
		t.Errorf("merge %v, want %v", merged, want)
	}
}

func TestGPUsScoped(t *testing.T) {
	b := fixture.New("x.sqlite", model.FormatNsys).Process(200, "other")
	a := b.Thread(1, "a")
	o := b.ThreadIn(200, 1, "o")
	b.Kernel(0, 7, "k", 0, 10, a, 0)
	b.Kernel(0, 7, "k", 20, 30, a, 0)
	b.Kernel(1, 7, "k", 5, 25, o, 0)
	b.T.Kernels[0].CorrScope, b.T.Kernels[1].CorrScope, b.T.Kernels[2].CorrScope = 100, 100, 200
	tr := b.Build()
	g := newGPUs(tr)
	if !g.Scoped {
		t.Fatal("not scoped")
	}
	v := g.For(100)
	if v == nil || v.Span != iv(0, 30) || !reflect.DeepEqual(v.Idle, []model.Interval{iv(10, 20)}) || v.FirstDevice() != 0 {
		t.Errorf("process 100: %+v", v)
	}
	if v := g.For(200); v == nil || len(v.Idle) != 0 || v.FirstDevice() != 1 {
		t.Errorf("process 200: %+v", v)
	}
	if g.For(300) != nil {
		t.Error("process 300 has GPUs")
	}
}
