package model

import (
	"math"
	"strings"
	"testing"
)

// TestValidateJobLog: a job log with out-of-range numbers or lines out of
// order fails Validate and names the table.
func TestValidateJobLog(t *testing.T) {
	ok := func() *Trace {
		tr := NewTrace("x.log", FormatJobLog)
		tr.JobLog = &JobLog{Lines: 3, Known: 2, StatsStride: 1, Sources: []string{"vllm-v1"},
			Stats: []EngineStat{{Engine: "vllm-v1", Kind: "stats", Line: 1, PromptTPS: 1, GenTPS: 2, Running: 1, Waiting: 0, Swapped: -1,
				KVUsage: 0.5, PrefixHit: -1, Tokens: -1, NewTokens: -1, CachedTokens: -1}},
			Events:   []EngineEvent{{Kind: "oom", Line: 2, Count: -1, GPU: 0, TriedBytes: 1, CapacityBytes: 10, FreeBytes: 0, AllocatedBytes: 9, ReservedUnallocBytes: 1, ReservedBytes: 10, Seconds: -1, Bytes: -1}},
			Capacity: []EngineCapacity{NewEngineCapacity("vllm", "", 3)},
			Requests: []RequestStat{{Engine: "tgi", Route: "generate", Line: 3, Total: 1.1, Validation: 0.002, Queue: 0.1, Inference: 0.998, TimePerToken: -1}},
		}
		tr.Finalize()
		return tr
	}
	if err := ok().Validate(); err != nil {
		t.Fatalf("valid log: %v", err)
	}
	for name, spoil := range map[string]func(j *JobLog){
		"kv above 1":       func(j *JobLog) { j.Stats[0].KVUsage = 3 },
		"negative tps":     func(j *JobLog) { j.Stats[0].GenTPS = -5 },
		"events out order": func(j *JobLog) { j.Events = append(j.Events, j.Events[0]); j.Events[1].Line = 1 },
		"no event kind":    func(j *JobLog) { j.Events[0].Kind = "" },
		"known > lines":    func(j *JobLog) { j.Known = 9 },
		"unsorted sources": func(j *JobLog) { j.Sources = []string{"z", "a"} },
		"capacity line 0":  func(j *JobLog) { j.Capacity[0].Line = 0 },
		"request line 0":   func(j *JobLog) { j.Requests[0].Line = 0 },
		"negative queue":   func(j *JobLog) { j.Requests[0].Queue = -2 },
		"NaN total":        func(j *JobLog) { j.Requests[0].Total = math.NaN() },
		"requests unordered": func(j *JobLog) {
			j.Requests = append(j.Requests, j.Requests[0])
			j.Requests[1].Line = 2
		},
	} {
		tr := ok()
		spoil(tr.JobLog)
		err := tr.Validate()
		if err == nil || !strings.Contains(err.Error(), "joblog") {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
}
