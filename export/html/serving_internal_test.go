package html

import (
	"testing"

	"github.com/tracedx/tracedx/model"
)

// TestEngineEvents: a preemption goes to its own engine instance only, one
// without an instance id and an OOM go to every instance; on a time axis an
// OOM without a time sits at the stats line before it, and one before any
// stats line is counted as not placed.
func TestEngineEvents(t *testing.T) {
	stat := func(id string, line int, sec int64) model.EngineStat {
		return model.EngineStat{Engine: "vllm-v1", ID: id, Line: line, Time: model.Time(sec * 1e9), HasTime: true}
	}
	j := &model.JobLog{
		Stats: []model.EngineStat{stat("000", 2, 100), stat("001", 3, 100), stat("000", 5, 110), stat("001", 6, 110)},
		Events: []model.EngineEvent{
			{Kind: "oom", Engine: "torch", Line: 1, Count: -1},
			{Kind: "preemption", Engine: "vllm-v1", ID: "001", Line: 4, Time: model.Time(105e9), HasTime: true, Count: 3},
			{Kind: "preemption", Engine: "vllm-v1", Line: 7, Time: model.Time(112e9), HasTime: true, Count: -1},
			{Kind: "oom", Engine: "torch", Line: 8, Count: -1},
			{Kind: "preemption", Engine: "sglang", Line: 9, Time: model.Time(113e9), HasTime: true, Count: 1},
		},
	}
	for _, es := range j.Series() {
		evs, untimed := engineEvents(j, es, newEngineAxis(es.Stats))
		pre, oom := evs[0], evs[1]
		wantX, wantN := []float64{12}, []int64{1}
		if es.ID == "001" {
			wantX, wantN = []float64{5, 12}, []int64{3, 1}
		}
		if len(pre.xs) != len(wantX) || untimed != 1 {
			t.Fatalf("%s: preemptions at %v (untimed %d), want %v and 1 untimed", es.Name(), pre.xs, untimed, wantX)
		}
		for i := range wantX {
			if pre.xs[i] != wantX[i] || pre.ns[i] != wantN[i] {
				t.Errorf("%s: preemption %d at %v x%d, want %v x%d", es.Name(), i, pre.xs[i], pre.ns[i], wantX[i], wantN[i])
			}
		}
		if len(oom.xs) != 1 || oom.xs[0] != 10 {
			t.Errorf("%s: OOMs at %v, want [10] (the stats line before)", es.Name(), oom.xs)
		}
	}
}
