package model

// Bench holds what an nccl-tests / rccl-tests log reports: benchmark runs and
// the NCCL facts printed around them. The nccl-tests importer fills it.
type Bench struct {
	Runs []BenchRun
	NCCL NCCLFacts
}

// BenchRun is one collective benchmark run (one table of results).
type BenchRun struct {
	Collective string // e.g. "all_reduce_perf" → "all_reduce"
	Ranks      int
	Nodes      int
	GPU        string
	Rows       []BenchRow
	// ReportedAvgBusBW is the log's "Avg bus bandwidth" in GB/s (-1 = not printed).
	ReportedAvgBusBW float64
}

// BenchRow is one message size of a run.
type BenchRow struct {
	SizeBytes  int64
	Count      int64
	Dtype      string
	Redop      string
	Root       int
	OutOfPlace BenchResult
	InPlace    BenchResult
}

// BenchResult is one half (out-of-place or in-place) of a row.
type BenchResult struct {
	Present   bool
	TimeUS    float64
	AlgBWGBps float64
	BusBWGBps float64
	Wrong     int64 // -1 = N/A
}

// NCCLFacts are NCCL facts from NCCL_DEBUG=INFO lines.
type NCCLFacts struct {
	Version    string
	Network    string
	Transports []string
	Warnings   []string
}
