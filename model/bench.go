package model

// Bench holds what an nccl-tests / rccl-tests log reports: benchmark runs and
// the NCCL facts printed around them. The nccl-tests importer fills it.
type Bench struct {
	Runs []BenchRun
	NCCL NCCLFacts
	// Failures are failure lines met anywhere in the log (nccl-tests
	// "Test NCCL failure", CUDA failures, timeouts, launcher aborts), in
	// file order. BenchFailure.Run says which run they interrupted.
	Failures []BenchFailure
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

	// Program is the test binary as printed ("all_reduce_perf"), "" when the
	// log never names it (Collective may then be inferred from the columns).
	Program string
	// Line is the 1-based log line where the run starts.
	Line int
	// TestsVersion is the nccl-tests version line ("2.17.8"), "" when absent.
	TestsVersion string
	// NCCLHeaders and NCCLLibrary are the nccl-tests version line's NCCL
	// codes (22902 = 2.29.2); 0 when absent.
	NCCLHeaders, NCCLLibrary int
	// Params are the run's header parameters (-1 = not printed).
	Params BenchParams
	// Hosts are the distinct host names of the rank lines, in rank order.
	Hosts []string
	// Devices are the rank lines ("# Rank 0 Group 0 Pid ... on host device
	// 0 [bus] GPU"), in log order (duplicates kept).
	Devices []BenchDevice
	// ErrorColumn is true for pre-2.13 tables whose last column per half is
	// "error" (max abs deviation, BenchResult.MaxDelta) rather than #wrong.
	ErrorColumn bool
	// OOBValues is the "Out of bounds values" count (-1 = not printed);
	// OOBFailed is true when the footer said FAILED.
	OOBValues int64
	OOBFailed bool
	// AvgFailed is true when "Avg bus bandwidth" carried FAILED
	// (NCCL_TESTS_MIN_BW not met).
	AvgFailed bool
	// Processes counts the parameter headers merged into this run: more than
	// 1 means independent processes each printed their own run (nccl-tests
	// not built with MPI=1, or MPI broken).
	Processes int
	// AvgLines counts "Avg bus bandwidth" lines attributed to this run.
	AvgLines int
	// TableHeader is true once the column header line was seen.
	TableHeader bool
	// Footer is true once "Out of bounds values" or "Avg bus bandwidth" was seen.
	Footer bool
	// Concluded is true when "Collective test concluded" was printed.
	Concluded bool
	// Truncated is true when the log ends (or the next run starts) inside
	// this run's table or header, without its footer.
	Truncated bool
	// RanksInferred is true when Ranks came from the busbw/algbw factor
	// rather than from rank lines.
	RanksInferred bool
	// Extras counts rows carrying tokens beyond the known columns (ignored).
	Extras int
	// Repeats counts the runs of the same benchmark merged into this one
	// (0 = not merged). The nccl-tests importer merges repeated runs only in
	// logs holding hundreds of runs, to keep memory bounded; the rows then
	// hold the mean time and bandwidths of the repeats and their summed
	// #wrong, and the out-of-bounds count is summed.
	Repeats int
}

// BenchParams are the parameters of an nccl-tests header line
// ("# nThread 1 nGpus 1 minBytes 8 maxBytes ... "). -1 = not printed.
// MaxBytes is the effective one when the log says "Reducing maxBytes to N".
type BenchParams struct {
	NThread, NGpus        int
	MinBytes, MaxBytes    int64
	StepFactor, StepBytes int64
	WarmupIters, Iters    int
	AggIters, Validation  int
	Graph                 int
	NRanks                int // rccl-tests 2023 "nRanks:" field
}

// BenchDevice is one rank line of a run.
type BenchDevice struct {
	Rank   int
	Group  int // -1 = not printed
	PID    int64
	Host   string
	Device int
	BusID  string
	GPU    string
	Line   int
}

// BenchFailure is one failure line.
type BenchFailure struct {
	// Kind is "nccl", "cuda", "timeout", "test" (a TESTCHECK back-trace
	// line), "launcher" (mpirun/srun/PMI aborts) or "other".
	Kind    string
	Host    string
	Source  string // "common.cu:1204" where the test reports it
	Message string
	Line    int // 1-based log line
	Run     int // index into Bench.Runs, -1 when outside any run
}

// BenchRow is one message size of a run.
type BenchRow struct {
	SizeBytes int64
	Count     int64
	Dtype     string
	Redop     string
	Root      int
	// Line is the 1-based log line of the row (of its first fragment).
	Line       int
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
	// MaxDelta is the pre-2.13 "error" column (max abs deviation, not a
	// count; 1e-7 is normal float noise); -1 = N/A or not that layout.
	MaxDelta float64
}

// NCCLFacts are NCCL facts from NCCL_DEBUG=INFO lines.
type NCCLFacts struct {
	Version    string
	Network    string
	Transports []string
	Warnings   []string

	// InfoLines counts NCCL INFO lines; WarnLines counts NCCL WARN lines
	// (Warnings keeps the distinct messages, capped).
	InfoLines, WarnLines int
	// Networks are the distinct "Using network X" values (Network is the first).
	Networks []string
	// TransportUse counts connection lines per transport, sorted by name;
	// names are those of Transports ("P2P/IPC/read", "SHM/direct/direct",
	// "NET/IB/GDRDMA", "NET/Socket", "COLLNET/SHARP/GDRDMA", ...); "NVLS"
	// (no "via" lines) counts its channels, or its "NVLS Head" lines.
	TransportUse []NCCLTransport
	// NetDevices are the distinct "NET/IB : Using ..." / "NET/Socket : Using"
	// device lists and "Bootstrap : Using" interfaces, prefixed by the
	// transport ("IB: [0]mlx5_0:1/IB", "Socket: [0]eth0:10.0.0.1<0>",
	// "Bootstrap: eth0:10.0.0.1<0>").
	NetDevices []string
	// HostNetDevices are the distinct NET device lists per host, as "host
	// IB: [0]mlx5_0:1/IB" (lines whose prefix names the host).
	HostNetDevices []string
	// OFIProvider is aws-ofi-nccl's selected provider ("efa", "cxi").
	OFIProvider string
	// NoIBVerbs is true when NCCL said it failed to open libibverbs.
	NoIBVerbs bool
	// GDRDisabled / GDREnabled count "GPU Direct RDMA Disabled/Enabled" lines.
	GDREnabled, GDRDisabled int
	// NVLSSupport: 1 = "NVLS multicast support is available", 0 = "not
	// available", -1 = never said.
	NVLSSupport int
	// NVLSHeads counts "NVLS Head" lines (NVLS set up).
	NVLSHeads int
	// Channel counts from "N coll channels, [M collnet channels, ][K nvls
	// channels, ]P p2p channels, Q p2p channels per peer" (max seen; -1 = never).
	CollChannels, CollNetChannels, NVLSChannels, P2PChannels int
	// RingChannels is the largest M of "Channel NN/MM : ranks..." lines (-1 = none).
	RingChannels int
	// InitComplete counts "- Init COMPLETE" lines; InitRanks is the largest
	// nranks they report (0 = none).
	InitComplete, InitRanks int
	// Nodes is the largest nNodes of "comm ... nNodes N" lines (0 = none).
	Nodes int
	// Env lists "X set by environment to Y" settings as "X=Y", sorted, distinct.
	Env []string
	// P2PDisabledHint is true when NCCL said intraNodeP2pSupport 0.
	P2PDisabledHint bool
}

// NCCLTransport is one transport and how many connection lines used it.
type NCCLTransport struct {
	Name  string
	Conns int
}
