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
		Job           jsonJob             `json:"job"`
		Inputs        []jsonInput         `json:"inputs"`
		Devices       []jsonDevice        `json:"devices"`
		Kernels       []jsonKernel        `json:"kernels"`
		Findings      []jsonFinding       `json:"findings"`
		NotMeasurable []jsonNotMeasurable `json:"not_measurable"`
		Warnings      []jsonWarning       `json:"warnings"`
		Health        []jsonHealth        `json:"health"`
		Ranges        []jsonRange         `json:"ranges"`
		API           []jsonAPI           `json:"api"`
		Copies        []jsonCopy          `json:"copies"`
		Ops           []jsonOp            `json:"ops"`
		Memory        []jsonMemory        `json:"memory"`
		Benchmarks    []jsonBenchmark     `json:"benchmarks,omitempty"`
		NCCL          *jsonNCCL           `json:"nccl,omitempty"`
		Serving       []jsonServing       `json:"serving,omitempty"`
		Steps         []jsonStep          `json:"steps,omitempty"`
		StepPhases    []jsonStepPhase     `json:"step_phases,omitempty"`
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
		// ByClass is kernel time per class (export/kernelops.go).
		ByClass map[string]int64 `json:"by_class,omitempty"`
	}
	jsonKernel struct {
		Name     string   `json:"name"`
		Count    int64    `json:"count"`
		TotalNs  int64    `json:"total_ns"`
		AvgNs    *float64 `json:"avg_ns"`
		MedianNs *float64 `json:"median_ns"`
		P90Ns    *float64 `json:"p90_ns"`
		MinNs    int64    `json:"min_ns"`
		MaxNs    int64    `json:"max_ns"`
		StddevNs *float64 `json:"stddev_ns"`
		Class    *string  `json:"class"`
		Device   *int     `json:"device"`
		// OpClass is what the kernel does: gemm, attention, moe, softmax,
		// norm, embedding-sampling, copy, reduction, elementwise, conv,
		// communication or other (model.ClassifyOp).
		OpClass string `json:"op_class"`
	}
	jsonRange struct {
		Name     string   `json:"name"`
		Domain   string   `json:"domain"`
		Kind     string   `json:"kind"`
		Count    int64    `json:"count"`
		TotalNs  int64    `json:"total_ns"`
		AvgNs    *float64 `json:"avg_ns"`
		MedianNs *float64 `json:"median_ns"`
		MinNs    int64    `json:"min_ns"`
		MaxNs    int64    `json:"max_ns"`
		GPUNs    *int64   `json:"gpu_ns"`
	}
	jsonAPI struct {
		Name     string   `json:"name"`
		Source   string   `json:"source"`
		Count    int64    `json:"count"`
		TotalNs  int64    `json:"total_ns"`
		AvgNs    *float64 `json:"avg_ns"`
		MedianNs *float64 `json:"median_ns"`
		MaxNs    int64    `json:"max_ns"`
	}
	jsonCopy struct {
		Kind          string       `json:"kind"`
		Count         int64        `json:"count"`
		Bytes         *int64       `json:"bytes"`
		TotalNs       int64        `json:"total_ns"`
		GBps          *float64     `json:"gbps"`
		SizeHistogram []jsonBucket `json:"size_histogram"`
		Unsized       int64        `json:"unsized"`
	}
	jsonBucket struct {
		Bucket string `json:"bucket"`
		Count  int64  `json:"count"`
	}
	jsonOp struct {
		Name     string         `json:"name"`
		GPUNs    int64          `json:"gpu_ns"`
		Launches int64          `json:"launches"`
		Kernels  []jsonOpKernel `json:"kernels"`
	}
	jsonOpKernel struct {
		Name  string `json:"name"`
		Count int64  `json:"count"`
		GPUNs int64  `json:"gpu_ns"`
	}
	jsonMemory struct {
		Rank               *int   `json:"rank"`
		Device             int    `json:"device"`
		PeakAllocatedBytes *int64 `json:"peak_allocated_bytes"`
		PeakReservedBytes  *int64 `json:"peak_reserved_bytes"`
		Events             int64  `json:"events"`
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
		Ranks          []int              `json:"ranks,omitempty"`
	}
	jsonEvidence struct {
		Rank     int     `json:"rank"`
		Device   int     `json:"device"`
		Stream   int64   `json:"stream"`
		Thread   int64   `json:"thread"`
		StartNs  int64   `json:"start_ns"`
		EndNs    int64   `json:"end_ns"`
		OffsetNs *int64  `json:"offset_ns"`
		Note     string  `json:"note,omitempty"`
		Cause    string  `json:"cause,omitempty"`
		Context  *string `json:"context,omitempty"`
		GPUIdle  *int64  `json:"gpu_idle_ns,omitempty"`
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
		Job:           jobJSON(r),
		Inputs:        []jsonInput{},
		Devices:       []jsonDevice{},
		Kernels:       []jsonKernel{},
		Findings:      []jsonFinding{},
		NotMeasurable: []jsonNotMeasurable{},
		Warnings:      []jsonWarning{},
		Health:        []jsonHealth{},
		Ranges:        []jsonRange{},
		API:           []jsonAPI{},
		Copies:        []jsonCopy{},
		Ops:           []jsonOp{},
		Memory:        []jsonMemory{},
	}
	out.Serving = servingJSON(r)
	for _, in := range r.Inputs {
		out.Inputs = append(out.Inputs, jsonInput{Path: in.Path, Format: string(in.Format), Rank: in.Rank, Producer: in.Producer})
	}
	for _, d := range r.Devices {
		out.Devices = append(out.Devices, jsonDevice{Rank: d.Rank, Device: int(d.Device), Name: d.Name, StartNs: int64(d.Start), EndNs: int64(d.End),
			SpanNs: int64(d.Span), BusyNs: int64(d.Busy), IdleNs: int64(d.Idle), ComputeNs: int64(d.Compute),
			CommunicationNs: int64(d.Communication), MemoryNs: int64(d.Memory), NonComputeNs: int64(d.NonCompute),
			IdlePct: round(pct(d.Idle, d.Span), 2), ComputePct: round(pct(d.Compute, d.Span), 2), Kernels: d.Kernels, MemOps: d.MemOps,
			ByClass: deviceClasses(r, d.Rank, d.Device)})
	}
	for _, k := range r.Kernels {
		jk := jsonKernel{Name: k.Name, Count: k.Count, TotalNs: int64(k.Total), AvgNs: optF(k.Avg()), MinNs: int64(k.Min), MaxNs: int64(k.Max),
			OpClass: k.Op.String()}
		if k.HasStats {
			jk.MedianNs, jk.P90Ns, jk.StddevNs = optF(k.Median), optF(k.P90), optF(k.Stddev)
			if k.Class != "" {
				c := k.Class
				jk.Class = &c
			}
			if k.Device != model.NoDevice {
				d := int(k.Device)
				jk.Device = &d
			}
		}
		out.Kernels = append(out.Kernels, jk)
	}
	jsonSummary(&out, &r.Summary)
	out.Steps, out.StepPhases = jsonStepsOf(r)
	orig := origins(r)
	for _, f := range r.Findings {
		jf := jsonFinding{Rule: f.Rule, Severity: f.Severity.String(), Layer: string(f.Layer), Title: f.Title, Message: f.Message,
			Recommendation: f.Recommendation, Confidence: string(f.Confidence), Metrics: map[string]float64{}, Evidence: []jsonEvidence{}, Ranks: f.Ranks}
		for _, m := range f.Metrics {
			jf.Metrics[m.Name] = finite(m.Value)
		}
		for _, e := range f.Evidence {
			je := jsonEvidence{Rank: e.Rank, Device: int(e.Device), Stream: int64(e.Stream), Thread: e.Thread,
				StartNs: int64(e.Start), EndNs: int64(e.End), OffsetNs: evidenceOffset(orig, e), Note: e.Note, Cause: e.Cause}
			if e.Cause != "" {
				je.Context = &e.Context // "" when nothing covers the gap
			}
			if e.GPUIdleKnown {
				idle := int64(e.GPUIdle)
				je.GPUIdle = &idle
			}
			jf.Evidence = append(jf.Evidence, je)
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

// optF returns a pointer to f rounded to 3 decimals, or nil (JSON null) for
// NaN and infinities: unknown values are null, never a sentinel.
func optF(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	v := round(f, 3)
	return &v
}

// optGBps is optF with 6 decimals (slow copies move a few MB/s).
func optGBps(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	v := round(f, 6)
	return &v
}

// optI returns a pointer to v, or nil (null) when v < 0 (unknown).
func optI(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// evidenceOffset is the evidence start as an offset from its rank's first
// GPU activity (exact in any JSON reader, unlike epoch ns above 2^53); nil
// when the rank has no GPU activity.
func evidenceOffset(orig map[int]model.Time, e model.Evidence) *int64 {
	base, ok := orig[e.Rank]
	if !ok {
		return nil
	}
	v := int64(e.Start - base)
	return &v
}

func jsonSummary(out *jsonReport, s *model.Summary) {
	for _, r := range s.Ranges {
		out.Ranges = append(out.Ranges, jsonRange{Name: r.Name, Domain: r.Domain, Kind: r.Kind.String(), Count: r.Stats.Count,
			TotalNs: int64(r.Stats.Total), AvgNs: optF(r.Stats.Avg), MedianNs: optF(r.Stats.Median), MinNs: int64(r.Stats.Min),
			MaxNs: int64(r.Stats.Max), GPUNs: optI(int64(r.GPU))})
	}
	for _, a := range s.API {
		out.API = append(out.API, jsonAPI{Name: a.Name, Source: a.Source.String(), Count: a.Stats.Count, TotalNs: int64(a.Stats.Total),
			AvgNs: optF(a.Stats.Avg), MedianNs: optF(a.Stats.Median), MaxNs: int64(a.Stats.Max)})
	}
	for _, c := range s.Copies {
		h := []jsonBucket{}
		for i, n := range c.Sizes {
			h = append(h, jsonBucket{model.SizeBucketLabels[i], n})
		}
		out.Copies = append(out.Copies, jsonCopy{Kind: c.Kind.String(), Count: c.Count, Bytes: optI(c.Bytes), TotalNs: int64(c.Total),
			GBps: optGBps(c.GBps), SizeHistogram: h, Unsized: c.Unsized})
	}
	for _, o := range s.Ops {
		jo := jsonOp{Name: o.Name, GPUNs: int64(o.GPU), Launches: o.Launches, Kernels: []jsonOpKernel{}}
		for _, k := range o.Kernels {
			jo.Kernels = append(jo.Kernels, jsonOpKernel{Name: k.Name, Count: k.Count, GPUNs: int64(k.GPU)})
		}
		out.Ops = append(out.Ops, jo)
	}
	for _, m := range s.Memory {
		jm := jsonMemory{Device: int(m.Device), PeakAllocatedBytes: optI(m.PeakAllocated), PeakReservedBytes: optI(m.PeakReserved), Events: m.Events}
		if m.Rank != model.NoRank {
			rk := m.Rank
			jm.Rank = &rk
		}
		out.Memory = append(out.Memory, jm)
	}
}
