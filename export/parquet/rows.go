package parquet

import (
	"github.com/tracedx/tracedx/model"
)

// Input status values.
const (
	StatusOK    = "ok"
	StatusError = "error"
)

// Input is the inputs row of one input.
type Input struct {
	Path   string
	Digest string // hex sha256 of the file's bytes
	Format string // "" when unknown (null)
	Status string // StatusOK or StatusError
	Error  string // "" when none (null)
	Rank   int    // model.NoRank when unknown (null)
	Bytes  int64
	// GatesFailed counts failed policy gates; Findings counts findings.
	GatesFailed int
	Findings    int
}

// Metric is one metric sample of an input.
type Metric struct {
	Device string // the device ("rank0/gpu1"); "" when none (null)
	Scope  string // which sample ("rank0/gpu1 #2", "all_reduce run 1"); "" report-wide (null)
	Name   string
	Value  float64
}

// Finding is one finding of an input, with its first evidence window.
type Finding struct {
	Rule, Severity, Layer, Title, Message, Confidence string
	HasEvidence                                       bool
	EvRank                                            int32
	EvDevice                                          int32 // -1 = none (null)
	EvStream                                          int64 // -1 = none (null)
	EvStartNS, EvEndNS                                int64
}

// Kernel is the per-name kernel summary of an input; pointers are null
// (unknown) when nil.
type Kernel struct {
	Name                  string
	Count                 int64
	TotalNS, MinNS, MaxNS int64
	AvgNS, MedianNS       *float64 `json:",omitempty"`
	P90NS, StddevNS       *float64 `json:",omitempty"`
	Class                 string   `json:",omitempty"`
	Device                *int32   `json:",omitempty"`
}

// Rows are all dataset rows of one input. They are plain data so that a
// batch can keep them on disk (as JSON) between runs.
type Rows struct {
	Input    Input
	Metrics  []Metric  `json:",omitempty"`
	Findings []Finding `json:",omitempty"`
	Kernels  []Kernel  `json:",omitempty"`
	Ranges   []Range   `json:",omitempty"`
	API      []API     `json:",omitempty"`
	Copies   []Copy    `json:",omitempty"`
	Ops      []Op      `json:",omitempty"`
	Memory   []Memory  `json:",omitempty"`
	Steps    []Step    `json:",omitempty"`
}

// FindingRows converts a report's findings.
func FindingRows(r *model.Report) []Finding {
	out := make([]Finding, 0, len(r.Findings))
	for _, f := range r.Findings {
		row := Finding{Rule: f.Rule, Severity: f.Severity.String(), Layer: string(f.Layer), Title: f.Title,
			Message: f.Message, Confidence: string(f.Confidence), EvDevice: -1, EvStream: -1}
		if len(f.Evidence) > 0 {
			e := f.Evidence[0]
			row.HasEvidence = true
			row.EvRank = int32(e.Rank)
			row.EvDevice = int32(e.Device)
			row.EvStream = int64(e.Stream)
			row.EvStartNS, row.EvEndNS = int64(e.Start), int64(e.End)
		}
		out = append(out, row)
	}
	return out
}

// KernelRows converts a report's kernel summaries.
func KernelRows(r *model.Report) []Kernel {
	out := make([]Kernel, 0, len(r.Kernels))
	for _, k := range r.Kernels {
		row := Kernel{Name: k.Name, Count: k.Count, TotalNS: int64(k.Total), MinNS: int64(k.Min), MaxNS: int64(k.Max), AvgNS: optF(k.Avg())}
		if k.HasStats {
			row.MedianNS, row.P90NS, row.StddevNS, row.Class = optF(k.Median), optF(k.P90), optF(k.Stddev), k.Class
			if k.Device != model.NoDevice {
				d := int32(k.Device)
				row.Device = &d
			}
		}
		out = append(out, row)
	}
	return out
}
