package model

import "math"

// Input describes one analysed file.
type Input struct {
	Path     string
	Format   Format
	Rank     int
	Producer string
}

// DeviceSummary is the GPU time breakdown of one device of one rank.
//
// Span runs from the start of the first GPU activity to the end of the last;
// Busy is the length of the union of all activity; Idle = Span - Busy.
// Compute, Communication and Memory are the lengths of the unions of each
// class's intervals; NonCompute = Busy - Compute.
type DeviceSummary struct {
	Rank          int
	Device        DeviceID
	Name          string
	Start, End    Time
	Span          Duration
	Busy          Duration
	Idle          Duration
	Compute       Duration
	Communication Duration
	Memory        Duration
	NonCompute    Duration
	Kernels       int64
	MemOps        int64
}

// KernelSummary is the total time of one kernel name.
type KernelSummary struct {
	Name  string
	Count int64
	Total Duration
	Min   Duration
	Max   Duration
	// HasStats says whether Median, P90, Stddev, Class and Device are
	// filled: they are not when the breakdown window (hta) counted other
	// instances than the summary saw.
	HasStats bool
	// Median, P90 and Stddev follow Stats' definitions (Stddev is NaN for
	// a single instance).
	Median, P90, Stddev float64
	// Class is the kernel's class ("computation", "communication"; "" = unknown).
	Class string
	// Device is the device every instance ran on; NoDevice when they ran on
	// several devices or ranks.
	Device DeviceID
	// Op is what the kernel does (ClassifyOp: gemm, attention, norm, ...).
	Op KernelOp
}

// Avg returns the mean duration (NaN for no instances).
func (k *KernelSummary) Avg() float64 {
	if k.Count == 0 {
		return math.NaN()
	}
	return float64(k.Total) / float64(k.Count)
}

// NotMeasurable says why a rule could not run on the input.
type NotMeasurable struct {
	Rule   string
	Reason string
}

// Report is the result of analysing one trace or one job's set of traces.
type Report struct {
	ToolName    string
	ToolVersion string
	// Window names the breakdown definitions used: "trace" (whole trace) or "hta".
	Window string
	// Job says how many ranks the job has and which were given.
	Job Job
	// RankTable is the job table, one row per rank (multi-rank reports only).
	RankTable     []RankSummary
	Inputs        []Input
	Devices       []DeviceSummary
	Kernels       []KernelSummary
	Findings      []Finding
	NotMeasurable []NotMeasurable
	Warnings      []Warning
	// Health holds one line per input on what the capture holds.
	Health []InputHealth
	// Bench holds benchmark results of nccl-tests inputs, one per input that has them.
	Bench []InputBench
	// Summary holds the summary tables (ranges, API calls, copies, ops, memory).
	Summary Summary
	// Steps are the engine / profiler steps of every rank (FindSteps), and
	// StepPhases their statistics per phase.
	Steps      []Step
	StepPhases []PhaseStats
	// Ops is the kernel time per KernelOp class per device (OpBreakdown).
	Ops []DeviceOps
	// JobLogs are the job / inference-server log inputs that hold engine
	// stats, for the HTML report's serving plots (not in the JSON report:
	// its serving summary carries the numbers).
	JobLogs []InputJobLog
}

// InputHealth summarises what one input's capture holds.
type InputHealth struct {
	Path         string
	Capabilities []string
	Missing      []string
	Notes        []string
	Counts       []Count
	Warnings     int
}

// Count is a named count.
type Count struct {
	Name string
	N    int64
}

// InputJobLog carries one log input's engine stats and events into the report.
type InputJobLog struct {
	Path   string
	Rank   int
	JobLog *JobLog
}

// InputBench carries one input's benchmark results into the report.
type InputBench struct {
	Path  string
	Rank  int
	Bench *Bench
}
