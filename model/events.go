package model

// Kernel is one GPU kernel execution.
type Kernel struct {
	Start, End Time
	// Correlation links the kernel to the API call that launched it, within
	// CorrScope (the process for Nsight Systems, 0 for Kineto). 0 = none.
	Correlation int64
	// ExternalID is Kineto's "External id" (0 = none).
	ExternalID int64
	Name       StringID // full (demangled where possible) name
	Device     DeviceID
	CorrScope  int32
	// Config is the launch configuration (short name, grid, block,
	// registers, shared memory, stream, CUDA graph) in Trace.Configs:
	// Trace.LaunchConfig, Trace.KernelStream, Trace.KernelGraph.
	Config ConfigID
}

// Interval returns the kernel's time window.
func (k *Kernel) Interval() Interval { return Interval{k.Start, k.End} }

// MemOpKind is the direction of a memory copy, or Memset.
type MemOpKind uint8

// Memory operation kinds.
const (
	MemUnknown MemOpKind = iota
	MemHtoD
	MemDtoH
	MemDtoD
	MemHtoH
	MemPtoP
	MemUVM // unified-memory migration
	MemSet
)

var memOpKindNames = [...]string{"unknown", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "UVM", "Memset"}

func (k MemOpKind) String() string {
	if int(k) < len(memOpKindNames) {
		return memOpKindNames[k]
	}
	return "invalid"
}

// MemKind is the kind of memory on one side of a copy.
type MemKind uint8

// Memory kinds.
const (
	MemKindUnknown MemKind = iota
	MemPageable
	MemPinned
	MemDevice
	MemManaged
	MemArray
)

var memKindNames = [...]string{"unknown", "pageable", "pinned", "device", "managed", "array"}

func (k MemKind) String() string {
	if int(k) < len(memKindNames) {
		return memKindNames[k]
	}
	return "invalid"
}

// MemOp is one GPU memory copy or memset.
type MemOp struct {
	Start, End  Time
	Correlation int64
	ExternalID  int64
	Bytes       int64 // -1 = unknown
	Stream      StreamID
	Name        StringID // the capture's own name, e.g. "Memcpy HtoD (Pageable -> Device)"
	Device      DeviceID
	CorrScope   int32
	Kind        MemOpKind
	Src, Dst    MemKind
	// Unified-memory migrations (Kind MemUVM) only: the direction the pages
	// moved (MemHtoD, MemDtoH or MemDtoD), why they moved, and the virtual
	// base address of the pages (0 = unknown).
	UVMDir   MemOpKind
	UVMCause MigrationCause
	Addr     uint64
}

// MigrationCause says why unified memory pages migrated (CUPTI's
// CUpti_ActivityUnifiedMemoryMigrationCause).
type MigrationCause uint8

// Migration causes.
const (
	MigrationUnknown        MigrationCause = iota
	MigrationUserPrefetch                  // cudaMemPrefetchAsync
	MigrationPageFault                     // demand migration on a CPU or GPU page fault (coherence)
	MigrationSpeculative                   // the driver's speculative prefetch around a fault
	MigrationEviction                      // evicted to make room on the device
	MigrationAccessCounters                // access-counter driven migration
)

var migrationCauseNames = [...]string{"unknown", "user-prefetch", "page-fault", "speculative-prefetch", "eviction", "access-counters"}

func (c MigrationCause) String() string {
	if int(c) < len(migrationCauseNames) {
		return migrationCauseNames[c]
	}
	return "invalid"
}

// APIClass classifies host API calls.
type APIClass uint8

// API call classes.
const (
	APIOther APIClass = iota
	APILaunch
	APISync
	APIMemcpy
	APIAlloc
	APIGraphLaunch
	APIMemset
)

var apiClassNames = [...]string{"other", "launch", "sync", "memcpy", "alloc", "graph-launch", "memset"}

func (c APIClass) String() string {
	if int(c) < len(apiClassNames) {
		return apiClassNames[c]
	}
	return "invalid"
}

// APISource tells which API layer a call belongs to.
type APISource uint8

// API sources.
const (
	APIRuntime APISource = iota // CUDA runtime / HIP runtime
	APIDriver                   // CUDA driver
	APIAccel                    // another accelerator runtime (e.g. MTIA)
)

func (s APISource) String() string {
	switch s {
	case APIRuntime:
		return "runtime"
	case APIDriver:
		return "driver"
	default:
		return "accel"
	}
}

// APICall is one host-side runtime or driver API call.
type APICall struct {
	Start, End Time
	// Correlation links the call to the GPU work it issued, within its
	// scope (Trace.CallScope). 0 = none.
	Correlation int64
	ExternalID  int64
	Thread      ThreadID
	// Ident is the call's name, class, source and correlation scope in
	// Trace.APIIdents: Trace.CallName, CallClass, CallSource, CallScope.
	Ident APIIdentID
}

// SyncKind is the kind of a GPU-side synchronisation record.
type SyncKind uint8

// Synchronisation kinds.
const (
	SyncUnknown SyncKind = iota
	SyncStream
	SyncOnEvent
	SyncContext
	SyncStreamWait
)

var syncKindNames = [...]string{"unknown", "stream", "event", "context", "stream-wait"}

func (k SyncKind) String() string {
	if int(k) < len(syncKindNames) {
		return syncKindNames[k]
	}
	return "invalid"
}

// SyncEvent is a GPU-side synchronisation record (CUPTI synchronization
// activity, Kineto cuda_sync).
type SyncEvent struct {
	Start, End  Time
	Correlation int64
	Stream      StreamID
	Device      DeviceID
	CorrScope   int32
	Kind        SyncKind
}

// RangeKind is the kind of an annotated range.
type RangeKind uint8

// Range kinds.
const (
	RangeUser          RangeKind = iota // record_function / user annotation
	RangeStep                           // ProfilerStep#N or an equivalent step marker
	RangeCPUOp                          // framework operator (aten::..., c10d::...)
	RangePython                         // Python function frame
	RangeNVTX                           // NVTX push/pop or start/end range
	RangeGPUAnnotation                  // a user range projected onto a GPU stream
	RangeMark                           // an instantaneous marker (End == Start)
)

var rangeKindNames = [...]string{"user", "step", "cpu-op", "python", "nvtx", "gpu-annotation", "mark"}

func (k RangeKind) String() string {
	if int(k) < len(rangeKindNames) {
		return rangeKindNames[k]
	}
	return "invalid"
}

// Range is an annotated interval on a CPU thread or, for RangeGPUAnnotation,
// on a GPU stream.
type Range struct {
	Start, End Time
	ExternalID int64
	Name       StringID
	Thread     ThreadID
	// Track is the range's domain, device and stream in Trace.RangeTracks:
	// Trace.RangeTrack.
	Track TrackID
	Depth int16 // nesting depth within its lane, 0 = outermost (set by Finalize)
	Kind  RangeKind
}

// OSCall is one OS runtime call (Nsight Systems OSRT trace).
type OSCall struct {
	Start, End Time
	Name       StringID
	Thread     ThreadID
	// CallChain indexes Trace.CallChains (-1 = none).
	CallChain int32
}

// GILState says what a thread was doing with the Python GIL.
type GILState uint8

// GIL states.
const (
	GILWaiting GILState = iota
	GILHeld
)

func (s GILState) String() string {
	if s == GILHeld {
		return "held"
	}
	return "waiting"
}

// GILInterval is a span in which a thread waited for or held the GIL.
type GILInterval struct {
	Start, End Time
	Thread     ThreadID
	State      GILState
}

// CollOp is a collective communication operation.
type CollOp uint8

// Collective operations.
const (
	CollUnknown CollOp = iota
	CollAllReduce
	CollAllGather
	CollReduceScatter
	CollBroadcast
	CollReduce
	CollAllToAll
	CollSendRecv
	CollSend
	CollRecv
	CollBarrier
	CollGather
	CollScatter
)

var collOpNames = [...]string{"unknown", "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all", "send_recv", "send", "recv", "barrier", "gather", "scatter"}

func (o CollOp) String() string {
	if int(o) < len(collOpNames) {
		return collOpNames[o]
	}
	return "invalid"
}

// CollSource says which side of the capture a collective record comes from.
type CollSource uint8

// Collective sources.
const (
	CollFromKernel CollSource = iota // a GPU communication kernel
	CollFromCPU                      // a host-side record (record_param_comms, c10d op)
)

// Collective is one communication operation.
type Collective struct {
	Start, End  Time
	Bytes       int64 // -1 = unknown
	Seq         int64 // sequence number within its process group (-1 = unknown)
	Correlation int64
	ExternalID  int64
	Stream      StreamID
	Dtype       StringID
	Group       StringID // process group name / id
	Device      DeviceID
	GroupSize   int32 // 0 = unknown
	Rank        int32 // NoRank = unknown
	Op          CollOp
	Source      CollSource
}

// CounterSeries describes one sampled metric.
type CounterSeries struct {
	Name   StringID
	Unit   StringID
	Device DeviceID
}

// CounterSample is one value of a counter series at a time.
type CounterSample struct {
	Time   Time
	Value  float64
	Series int32 // index into Trace.Counters
}

// MemEvent is one allocator event: an allocation (Bytes > 0) or a free
// (Bytes < 0), with the allocator's totals after it where known (-1 = unknown).
type MemEvent struct {
	Time           Time
	Bytes          int64
	Addr           uint64
	TotalAllocated int64
	TotalReserved  int64
	Thread         ThreadID
	Device         DeviceID // NoDevice for host memory
}
