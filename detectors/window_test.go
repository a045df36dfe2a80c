package detectors

import (
	"reflect"
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func iv(s, e float64) model.Interval { return model.Interval{Start: fixture.US(s), End: fixture.US(e)} }

func TestEncloser(t *testing.T) {
	b := fixture.New("x.json", model.FormatKineto)
	th := b.Thread(1, "main")
	other := b.Thread(2, "other")
	b.Range(th, model.RangeNVTX, "step", 0, 100)
	b.Range(th, model.RangeCPUOp, "aten::item", 10, 20)
	b.Range(th, model.RangeCPUOp, "aten::_local_scalar_dense", 11, 19)
	b.Range(th, model.RangePython, "frame", 30, 40) // not a chosen kind
	b.Range(th, model.RangeCPUOp, "aten::add", 50, 60)
	b.Range(other, model.RangeCPUOp, "aten::mm", 0, 100)
	tr := b.Build()
	name := func(i int) string {
		if i < 0 {
			return "-"
		}
		return tr.Str(tr.Ranges[i].Name)
	}
	e := NewEncloser(tr, model.RangeCPUOp, model.RangeNVTX)
	for _, c := range []struct {
		s, e float64
		want string
	}{
		{1, 2, "step"},
		{12, 13, "aten::_local_scalar_dense"},
		{15, 20, "aten::item"},
		{32, 33, "step"},
		{55, 56, "aten::add"},
		{59, 61, "step"},
		{99, 101, "-"},
	} {
		if got := name(e.Find(th, fixture.US(c.s), fixture.US(c.e))); got != c.want {
			t.Errorf("Find(%v,%v) = %s, want %s", c.s, c.e, got, c.want)
		}
	}
	if got := name(e.Find(other, fixture.US(5), fixture.US(6))); got != "aten::mm" {
		t.Errorf("other thread: %s", got)
	}
}

func TestSteady(t *testing.T) {
	b := fixture.New("x.json", model.FormatKineto)
	th := b.Thread(1, "main")
	b.Step(th, 7, 0, 10)
	b.Step(th, 8, 10, 20)
	b.Step(th, 9, 20, 40)
	tr := b.Build()
	span, ok := HostSpan(tr)
	if !ok || span != iv(0, 40) {
		t.Fatalf("span %v %v", span, ok)
	}
	for _, c := range []struct {
		steps int
		pct   float64
		want  model.Interval
	}{
		{1, 10, iv(10, 40)},
		{2, 10, iv(20, 40)},
		{3, 10, iv(4, 40)}, // too few steps: percentage
		{0, 25, iv(10, 40)},
		{0, 0, iv(0, 40)},
	} {
		if got, how := Steady(tr, span, c.steps, c.pct); got != c.want {
			t.Errorf("Steady(%d, %v) = %v (%s), want %v", c.steps, c.pct, got, how, c.want)
		}
	}
}

func TestUnionInPlaceAndCorrIndex(t *testing.T) {
	got := UnionInPlace([]model.Interval{iv(5, 6), iv(0, 2), iv(1, 3), iv(3, 4), iv(7, 7)})
	if want := []model.Interval{iv(0, 4), iv(5, 6)}; !reflect.DeepEqual(got, want) {
		t.Errorf("union %v, want %v", got, want)
	}
	tr := model.NewTrace("x", model.FormatNsys)
	for _, c := range []struct {
		scope int32
		corr  int64
	}{{2, 5}, {1, 9}, {1, 3}, {2, 1}, {1, 0}, {1, 3}, {1, 3}} {
		tr.APICalls = append(tr.APICalls, model.APICall{Ident: tr.InternAPI(model.APIIdent{Scope: c.scope, Class: model.APIMemcpy}), Correlation: c.corr})
	}
	x := IndexAPI(tr, func(*model.APICall) bool { return true })
	if len(x.rows) != 6 {
		t.Fatalf("len %d", len(x.rows))
	}
	// Every call is found, a duplicate key as its first call (also right
	// after a lookup of that key, when the next entry has the same key).
	for i, c := range tr.APICalls {
		want := int32(i)
		if c.Correlation == 0 {
			want = -1
		} else if c.Correlation == 3 {
			want = 2
		}
		if got := x.Lookup(CorrKey{tr.CallScope(&c), c.Correlation}); got != want {
			t.Errorf("lookup %v = %d, want %d", c, got, want)
		}
	}
	if x.Lookup(CorrKey{3, 5}) != -1 {
		t.Error("found a missing key")
	}
}
