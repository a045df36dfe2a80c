package export

import (
	"encoding/json"
	"io"
	"math"

	"github.com/tracedx/tracedx/model"
)

// SchemaVersion is the version of the JSON wire form.
const SchemaVersion = "1"

// The JSON wire types: separate from the model so the model can change
// without breaking tools that read reports.
type (
	jsonReport struct {
		SchemaVersion string              `json:"schema_version"`
		Tool          jsonTool            `json:"tool"`
		Window        string              `json:"window"`
		Inputs        []jsonInput         `json:"inputs"`
		Devices       []jsonDevice        `json:"devices"`
		Kernels       []jsonKernel        `json:"kernels"`
		Findings      []jsonFinding       `json:"findings"`
		NotMeasurable []jsonNotMeasurable `json:"not_measurable"`
		Warnings      []jsonWarning       `json:"warnings"`
		Health        []jsonHealth        `json:"health"`
		Benchmarks    []jsonBenchmark     `json:"benchmarks,omitempty"`
		NCCL          *jsonNCCL           `json:"nccl,omitempty"`
	}
	jsonTool struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	jsonInput struct {
		Path     string `json:"path"`
		Format   string `json:"format"`
		Rank     int    `json:"rank"`
		Producer string `json:"producer"`
	}
	jsonDevice struct {
		Rank            int     `json:"rank"`
		Device          int     `json:"device"`
		Name            string  `json:"name"`
		StartNs         int64   `json:"start_ns"`
		EndNs           int64   `json:"end_ns"`
		SpanNs          int64   `json:"span_ns"`
		BusyNs          int64   `json:"busy_ns"`
		IdleNs          int64   `json:"idle_ns"`
		ComputeNs       int64   `json:"compute_ns"`
		CommunicationNs int64   `json:"communication_ns"`
		MemoryNs        int64   `json:"memory_ns"`
		NonComputeNs    int64   `json:"non_compute_ns"`
		IdlePct         float64 `json:"idle_pct"`
		ComputePct      float64 `json:"compute_pct"`
		Kernels         int64   `json:"kernel_count"`
		MemOps          int64   `json:"memop_count"`
	}
	jsonKernel struct {
		Name    string `json:"name"`
		Count   int64  `json:"count"`
		TotalNs int64  `json:"total_ns"`
		MinNs   int64  `json:"min_ns"`
		MaxNs   int64  `json:"max_ns"`
	}
	jsonFinding struct {
		Rule           string             `json:"rule"`
		Severity       string             `json:"severity"`
		Layer          string             `json:"layer"`
		Title          string             `json:"title"`
		Message        string             `json:"message"`
		Recommendation string             `json:"recommendation"`
		Confidence     string             `json:"confidence"`
		Metrics        map[string]float64 `json:"metrics"`
		Evidence       []jsonEvidence     `json:"evidence"`
	}
	jsonEvidence struct {
		Rank    int    `json:"rank"`
		Device  int    `json:"device"`
		Stream  int64  `json:"stream"`
		Thread  int64  `json:"thread"`
		StartNs int64  `json:"start_ns"`
		EndNs   int64  `json:"end_ns"`
		Note    string `json:"note,omitempty"`
	}
	jsonNotMeasurable struct {
		Rule   string `json:"rule"`
		Reason string `json:"reason"`
	}
	jsonWarning struct {
		File     string `json:"file"`
		Position string `json:"position"`
		Message  string `json:"message"`
	}
	jsonHealth struct {
		Path         string           `json:"path"`
		Capabilities []string         `json:"capabilities"`
		Missing      []string         `json:"missing"`
		Notes        []string         `json:"notes"`
		Counts       map[string]int64 `json:"counts"`
		Warnings     int              `json:"warnings"`
	}
	jsonBenchmark struct {
		Input            string         `json:"input"`
		Collective       string         `json:"collective"`
		Ranks            int            `json:"ranks"`
		Nodes            int            `json:"nodes"`
		GPU              string         `json:"gpu"`
		Rows             []jsonBenchRow `json:"rows"`
		ReportedAvgBusBW *float64       `json:"reported_avg_busbw_gbps"`
	}
	jsonBenchRow struct {
		SizeBytes  int64          `json:"size_bytes"`
		Count      int64          `json:"count"`
		Dtype      string         `json:"dtype"`
		Redop      string         `json:"redop"`
		Root       int            `json:"root"`
		OutOfPlace *jsonBenchHalf `json:"out_of_place"`
		InPlace    *jsonBenchHalf `json:"in_place"`
	}
	jsonBenchHalf struct {
		TimeUS    float64 `json:"time_us"`
		AlgBWGBps float64 `json:"algbw_gbps"`
		BusBWGBps float64 `json:"busbw_gbps"`
		Wrong     *int64  `json:"wrong"`
	}
	jsonNCCL struct {
		Version    string   `json:"version"`
		Network    string   `json:"network"`
		Transports []string `json:"transports"`
		Warnings   []string `json:"warnings"`
	}
)

// finite replaces NaN and infinities (which JSON cannot carry) with 0.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func round(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(finite(f)*p) / p
}

// JSON writes the report's JSON wire form (schema_version "1").
func JSON(w io.Writer, r *model.Report) error {
	out := jsonReport{
		SchemaVersion: SchemaVersion,
		Tool:          jsonTool{Name: r.ToolName, Version: r.ToolVersion},
		Window:        r.Window,
		Inputs:        []jsonInput{},
		Devices:       []jsonDevice{},
		Kernels:       []jsonKernel{},
		Findings:      []jsonFinding{},
		NotMeasurable: []jsonNotMeasurable{},
		Warnings:      []jsonWarning{},
		Health:        []jsonHealth{},
	}
	for _, in := range r.Inputs {
		out.Inputs = append(out.Inputs, jsonInput{Path: in.Path, Format: string(in.Format), Rank: in.Rank, Producer: in.Producer})
	}
	for _, d := range r.Devices {
		out.Devices = append(out.Devices, jsonDevice{Rank: d.Rank, Device: int(d.Device), Name: d.Name, StartNs: int64(d.Start), EndNs: int64(d.End),
			SpanNs: int64(d.Span), BusyNs: int64(d.Busy), IdleNs: int64(d.Idle), ComputeNs: int64(d.Compute),
			CommunicationNs: int64(d.Communication), MemoryNs: int64(d.Memory), NonComputeNs: int64(d.NonCompute),
			IdlePct: round(pct(d.Idle, d.Span), 2), ComputePct: round(pct(d.Compute, d.Span), 2), Kernels: d.Kernels, MemOps: d.MemOps})
	}
	for _, k := range r.Kernels {
		out.Kernels = append(out.Kernels, jsonKernel{Name: k.Name, Count: k.Count, TotalNs: int64(k.Total), MinNs: int64(k.Min), MaxNs: int64(k.Max)})
	}
	for _, f := range r.Findings {
		jf := jsonFinding{Rule: f.Rule, Severity: f.Severity.String(), Layer: string(f.Layer), Title: f.Title, Message: f.Message,
			Recommendation: f.Recommendation, Confidence: string(f.Confidence), Metrics: map[string]float64{}, Evidence: []jsonEvidence{}}
		for _, m := range f.Metrics {
			jf.Metrics[m.Name] = finite(m.Value)
		}
		for _, e := range f.Evidence {
			jf.Evidence = append(jf.Evidence, jsonEvidence{Rank: e.Rank, Device: int(e.Device), Stream: int64(e.Stream), Thread: e.Thread,
				StartNs: int64(e.Start), EndNs: int64(e.End), Note: e.Note})
		}
		out.Findings = append(out.Findings, jf)
	}
	for _, n := range r.NotMeasurable {
		out.NotMeasurable = append(out.NotMeasurable, jsonNotMeasurable{Rule: n.Rule, Reason: n.Reason})
	}
	for _, w := range r.Warnings {
		out.Warnings = append(out.Warnings, jsonWarning{File: w.File, Position: w.Position, Message: w.Message})
	}
	for _, h := range r.Health {
		jh := jsonHealth{Path: h.Path, Capabilities: nonNil(h.Capabilities), Missing: nonNil(h.Missing), Notes: nonNil(h.Notes),
			Counts: map[string]int64{}, Warnings: h.Warnings}
		for _, c := range h.Counts {
			jh.Counts[c.Name] = c.N
		}
		out.Health = append(out.Health, jh)
	}
	for _, ib := range r.Bench {
		b := ib.Bench
		for _, run := range b.Runs {
			jb := jsonBenchmark{Input: ib.Path, Collective: run.Collective, Ranks: run.Ranks, Nodes: run.Nodes, GPU: run.GPU, Rows: []jsonBenchRow{}}
			if run.ReportedAvgBusBW >= 0 {
				v := run.ReportedAvgBusBW
				jb.ReportedAvgBusBW = &v
			}
			for _, row := range run.Rows {
				jb.Rows = append(jb.Rows, jsonBenchRow{SizeBytes: row.SizeBytes, Count: row.Count, Dtype: row.Dtype, Redop: row.Redop, Root: row.Root,
					OutOfPlace: benchHalf(row.OutOfPlace), InPlace: benchHalf(row.InPlace)})
			}
			out.Benchmarks = append(out.Benchmarks, jb)
		}
		if out.NCCL == nil && (b.NCCL.Version != "" || b.NCCL.Network != "" || len(b.NCCL.Transports) > 0) {
			out.NCCL = &jsonNCCL{Version: b.NCCL.Version, Network: b.NCCL.Network, Transports: nonNil(b.NCCL.Transports), Warnings: nonNil(b.NCCL.Warnings)}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func benchHalf(h model.BenchResult) *jsonBenchHalf {
	if !h.Present {
		return nil
	}
	out := &jsonBenchHalf{TimeUS: finite(h.TimeUS), AlgBWGBps: finite(h.AlgBWGBps), BusBWGBps: finite(h.BusBWGBps)}
	if h.Wrong >= 0 {
		v := h.Wrong
		out.Wrong = &v
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
