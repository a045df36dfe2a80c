package syncapi

import (
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func TestParents(t *testing.T) {
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
	par := Parents(tr, model.RangeCPUOp, model.RangeNVTX)
	for i := range tr.Ranges {
		want := map[string]string{"step": "-", "aten::item": "step", "aten::_local_scalar_dense": "aten::item", "frame": "-",
			"aten::add": "step", "aten::mm": "-"}[name(i)]
		if got := name(int(par[i])); got != want {
			t.Errorf("parent of %s = %s, want %s", name(i), got, want)
		}
	}
}
