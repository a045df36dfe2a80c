package nsys

// The raw layer: one typed row struct per export table, holding the columns
// the importer uses under their export names. Integer columns that are NULL
// or absent hold the value given in read.go (0, or -1 for string ids and
// other "none" values). The reader fills one reused row per table and hands it
// to the builder (build.go), which turns rows into the model; FuzzBuild drives
// the builder with arbitrary rows and no SQLite at all.

// Table names used by the importer.
const (
	tStrings        = "StringIds"
	tKernel         = "CUPTI_ACTIVITY_KIND_KERNEL"
	tRuntime        = "CUPTI_ACTIVITY_KIND_RUNTIME"
	tDriver         = "CUPTI_ACTIVITY_KIND_DRIVER"
	tMemcpy         = "CUPTI_ACTIVITY_KIND_MEMCPY"
	tMemset         = "CUPTI_ACTIVITY_KIND_MEMSET"
	tSync           = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
	tGraphTrace     = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
	tNVTX           = "NVTX_EVENTS"
	tOSRT           = "OSRT_API"
	tOSRTChains     = "OSRT_CALLCHAINS"
	tThreadNames    = "ThreadNames"
	tProcesses      = "PROCESSES"
	tGPU            = "TARGET_INFO_GPU"
	tCUDAGPU        = "TARGET_INFO_CUDA_GPU"
	tCUDADevice     = "TARGET_INFO_CUDA_DEVICE"
	tSessionStart   = "TARGET_INFO_SESSION_START_TIME"
	tAnalysis       = "ANALYSIS_DETAILS"
	tMetaExport     = "META_DATA_EXPORT"
	tMetaExportOld  = "EXPORT_META_DATA"
	tGPUMetrics     = "GPU_METRICS"
	tGPUMetricsInfo = "TARGET_INFO_GPU_METRICS"
	tMemUsage       = "CUDA_GPU_MEMORY_USAGE_EVENTS"
	tEnumMemcpy     = "ENUM_CUDA_MEMCPY_OPER"
	tEnumMemKind    = "ENUM_CUDA_MEM_KIND"
)

type kernelRow struct {
	Start, End  int64
	DeviceID    int64
	StreamID    int64
	Correlation int64
	GlobalPid   int64
	Demangled   int64 // StringIds id, -1 = NULL
	Short       int64 // StringIds id, -1 = NULL
	Registers   int64
	Grid, Block [3]int64
	SharedMem   int64 // static + dynamic
	GraphID     int64 // graphId (2025.5+), 0 = none
	GraphNodeID int64 // graphNodeId, 0 = none
}

type runtimeRow struct {
	Start, End  int64
	EventClass  int64 // 0 runtime, 1 driver, -1 unknown
	GlobalTid   int64
	Correlation int64
	NameID      int64 // -1 = NULL
}

type memcpyRow struct {
	Start, End       int64
	DeviceID         int64
	StreamID         int64
	Correlation      int64
	GlobalPid        int64
	Bytes            int64 // -1 = NULL
	CopyKind         int64
	SrcKind, DstKind int64
	MigrationCause   int64 // unified memory only; 0 = unknown or absent
	VirtualAddress   int64 // unified memory only; 0 = unknown or absent
}

type memsetRow struct {
	Start, End  int64
	DeviceID    int64
	StreamID    int64
	Correlation int64
	GlobalPid   int64
	Bytes       int64 // -1 = NULL
	MemKind     int64 // -1 = NULL
}

type syncRow struct {
	Start, End  int64
	DeviceID    int64 // -1 = NULL
	StreamID    int64 // -1 = NULL; 0xFFFFFFFF = none
	Correlation int64
	GlobalPid   int64
	SyncType    int64
}

type graphTraceRow struct {
	Start, End  int64
	DeviceID    int64
	StreamID    int64
	Correlation int64
	GlobalPid   int64
	GraphID     int64
}

type nvtxRow struct {
	Start, End int64
	EndValid   bool
	EventType  int64
	GlobalTid  int64
	TextID     int64 // -1 = NULL
	DomainID   int64
	Text       string
	TextValid  bool
}

type osrtRow struct {
	Start, End  int64
	EventClass  int64 // -1 = unknown
	GlobalTid   int64
	NameID      int64 // -1 = NULL
	CallchainID int64 // 0 = none
}

type callchainRow struct {
	ID     int64
	Symbol int64 // -1 = NULL
	Module int64 // -1 = NULL
	Depth  int64
}

type threadNameRow struct {
	GlobalTid int64
	NameID    int64
}

type processRow struct {
	GlobalPid int64
	PID       int64 // -1 = NULL
	Name      string
}

type gpuRow struct {
	ID         int64
	CuDevice   int64 // -1 = unknown
	Name       string
	SMs        int64
	Memory     int64
	Bandwidth  float64
	Major      int64
	Minor      int64
	Bus        string
	HasCompute bool // the row has a computeMajor column (2021.2+)
}

type cudaDeviceRow struct {
	GPUID, CudaID, PID int64
}

type metricDefRow struct {
	TypeID, MetricID int64
	TypeName         string
	MetricName       string
}

type metricRow struct {
	Timestamp        int64
	TypeID, MetricID int64
	Value            float64
}

type memUsageRow struct {
	Start     int64
	GlobalPid int64
	DeviceID  int64
	Address   int64
	Bytes     int64
	MemKind   int64
	Op        int64 // 0 alloc, 1 free
}

// gilRow is one interval of a Python GIL table whose shape was recognised.
type gilRow struct {
	Start, End int64
	GlobalTid  int64
	State      string // free text: "wait...", "hold/held/acquired"...
}
