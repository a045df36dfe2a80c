package parquet

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/tracedx/tracedx/model"
)

// TableSteps is the engine / profiler steps table (the step model).
const TableSteps = "steps"

// StepsSchema: one row per step of an input; unknown values are null.
var StepsSchema = arrow.NewSchema([]arrow.Field{
	dict("input", false), field("rank", i32, true), field("index", i64, false), dict("name", false), dict("engine", true), dict("phase", false),
	field("batch_size", i64, true), field("tokens", i64, true), field("kv_len", i64, true),
	field("start_ns", i64, false), field("end_ns", i64, false), field("time_ns", i64, false),
	field("busy_ns", i64, true), field("idle_ns", i64, true), field("idle_before_next_ns", i64, true),
	field("kernels", i64, true), field("graph_launches", i64, false),
}, nil)

// Step is one step row; pointers are null.
type Step struct {
	Rank                        int
	Index                       int64
	Name, Engine, Phase         string
	BatchSize, Tokens, KVLen    *int64
	StartNS, EndNS, TimeNS      int64
	BusyNS, IdleNS, IdleAfterNS *int64
	Kernels                     *int64
	GraphLaunches               int64
}

// StepRows converts a report's steps.
func StepRows(r *model.Report) []Step {
	out := make([]Step, 0, len(r.Steps))
	for i := range r.Steps {
		s := &r.Steps[i]
		row := Step{Rank: s.Rank, Index: int64(s.Index), Name: s.Name, Engine: s.Engine, Phase: string(s.Phase), BatchSize: optI(s.BatchSize),
			Tokens: optI(s.Tokens), KVLen: optI(s.KVLen), StartNS: int64(s.Start), EndNS: int64(s.End), TimeNS: int64(s.Time()),
			IdleAfterNS: optI(int64(s.IdleBeforeNext)), GraphLaunches: s.GraphLaunches}
		if s.Correlated {
			row.BusyNS, row.IdleNS, row.Kernels = optI(int64(s.Busy)), optI(int64(s.Idle)), optI(s.Kernels)
		}
		out = append(out, row)
	}
	return out
}

// appendSteps appends the step rows of one input; it returns their number.
func appendSteps(t *table, path string, r *Rows) int {
	b := t.rb
	for _, s := range r.Steps {
		appendDict(b.Field(0), path)
		if s.Rank < 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(int32(s.Rank))
		}
		i64b(b.Field(2), s.Index)
		appendDict(b.Field(3), s.Name)
		appendDictOrNull(b.Field(4), s.Engine)
		appendDict(b.Field(5), s.Phase)
		appendI(b.Field(6), s.BatchSize)
		appendI(b.Field(7), s.Tokens)
		appendI(b.Field(8), s.KVLen)
		i64b(b.Field(9), s.StartNS)
		i64b(b.Field(10), s.EndNS)
		i64b(b.Field(11), s.TimeNS)
		appendI(b.Field(12), s.BusyNS)
		appendI(b.Field(13), s.IdleNS)
		appendI(b.Field(14), s.IdleAfterNS)
		appendI(b.Field(15), s.Kernels)
		i64b(b.Field(16), s.GraphLaunches)
	}
	return len(r.Steps)
}
