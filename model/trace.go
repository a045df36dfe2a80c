package model

import (
	"cmp"
	"fmt"
	"sort"
	"sync"
)

// Format names an input format as it appears in reports.
type Format string

// Input formats.
const (
	FormatKineto    Format = "kineto"
	FormatNsys      Format = "nsys"
	FormatNCCLTests Format = "nccl-tests"
)

// DeviceKind says what kind of device a Device is.
type DeviceKind uint8

// Device kinds.
const (
	DeviceGPU   DeviceKind = iota // an NVIDIA or AMD GPU
	DeviceAccel                   // another accelerator (e.g. Meta MTIA)
)

func (k DeviceKind) String() string {
	if k == DeviceAccel {
		return "accelerator"
	}
	return "gpu"
}

// Device is one accelerator seen by the capture.
type Device struct {
	ID           DeviceID
	Name         string
	Kind         DeviceKind
	Vendor       string // "NVIDIA", "AMD", "Meta", "" when unknown
	SMs          int32  // streaming multiprocessors / compute units (0 = unknown)
	MemoryBytes  int64  // 0 = unknown
	ComputeMajor int32
	ComputeMinor int32
	// MemoryBandwidth in bytes per second (0 = unknown).
	MemoryBandwidth float64
	BusID           string
}

// Process is one OS process of the capture.
type Process struct {
	PID  int64
	Name string
}

// Thread is one CPU thread of the capture.
type Thread struct {
	PID  int64
	TID  int64
	Name string
}

// Warning is a non-fatal problem met while importing: a spoiled record, an
// unknown shape, a missing table. Import goes on.
type Warning struct {
	File     string
	Position string // e.g. "byte 1234", "event 56", "line 7", "table KERNEL row 9"
	Message  string
}

// Trace is the common timeline of one capture (one rank, one file).
type Trace struct {
	Path      string
	Format    Format
	Producer  string // producer and version as the file says, e.g. "nsys 2024.5.4"
	Rank      int    // NoRank when unknown
	WorldSize int    // 0 when unknown
	Clock     Clock
	// Capture is the capture window when the file records it (zero otherwise).
	Capture Interval
	Caps    Capabilities

	Strings StringTable
	Configs ConfigTable // kernel launch configurations (Kernel.Config)
	// RangeTracks are the ranges' domains, devices and streams (Range.Track).
	RangeTracks TrackTable
	// APIIdents are the API calls' names, classes, sources and scopes
	// (APICall.Ident).
	APIIdents APIIdentTable
	Devices   []Device
	Processes []Process
	Threads   []Thread

	Kernels     []Kernel
	MemOps      []MemOp
	APICalls    []APICall
	Syncs       []SyncEvent
	Ranges      []Range
	OSCalls     []OSCall
	GIL         []GILInterval
	Collectives []Collective
	Counters    []CounterSeries
	Samples     []CounterSample
	MemEvents   []MemEvent

	// OpShapes are the recorded input shapes of GEMM-like CPU operators
	// (ShapedOp), sorted by ExternalID (cold data).
	OpShapes []OpShape

	// CallChains holds OS runtime call chains (cold data), indexed by
	// OSCall.CallChain; each is a list of frame names, innermost first.
	CallChains [][]StringID

	// Bench holds nccl-tests / rccl-tests results (nil for timelines).
	Bench *Bench
	// JobLog holds what a job / inference-server log says (nil otherwise).
	JobLog *JobLog

	// Meta holds scalar facts from the file's header (e.g. "cuda_runtime_version").
	Meta map[string]string

	Warnings []Warning

	threadIndex map[[2]int64]ThreadID
}

// NewTrace returns an empty trace for the given file and format.
func NewTrace(path string, f Format) *Trace {
	return &Trace{Path: path, Format: f, Rank: NoRank, Meta: map[string]string{}}
}

// Str returns the interned string id.
func (t *Trace) Str(id StringID) string { return t.Strings.Get(id) }

// Intern interns s in the trace's string table.
func (t *Trace) Intern(s string) StringID { return t.Strings.Intern(s) }

// Warn records an import warning.
func (t *Trace) Warn(position, format string, args ...any) {
	t.Warnings = append(t.Warnings, Warning{File: t.Path, Position: position, Message: fmt.Sprintf(format, args...)})
}

// ThreadFor returns the ThreadID for (pid, tid), adding the thread if new.
func (t *Trace) ThreadFor(pid, tid int64) ThreadID {
	if t.threadIndex == nil {
		t.threadIndex = make(map[[2]int64]ThreadID, len(t.Threads))
		for i, th := range t.Threads {
			t.threadIndex[[2]int64{th.PID, th.TID}] = ThreadID(i)
		}
	}
	k := [2]int64{pid, tid}
	if id, ok := t.threadIndex[k]; ok {
		return id
	}
	id := ThreadID(len(t.Threads))
	t.Threads = append(t.Threads, Thread{PID: pid, TID: tid})
	t.threadIndex[k] = id
	return id
}

// Thread returns the thread with the given id, or a zero Thread for NoThread.
func (t *Trace) Thread(id ThreadID) Thread {
	if id < 0 || int(id) >= len(t.Threads) {
		return Thread{PID: -1, TID: -1}
	}
	return t.Threads[id]
}

// Device returns the device with the given id, if known.
func (t *Trace) Device(id DeviceID) (Device, bool) {
	for _, d := range t.Devices {
		if d.ID == id {
			return d, true
		}
	}
	return Device{}, false
}

// EnsureDevice adds a device entry for id if there is none and returns its index.
func (t *Trace) EnsureDevice(id DeviceID) int {
	for i, d := range t.Devices {
		if d.ID == id {
			return i
		}
	}
	t.Devices = append(t.Devices, Device{ID: id})
	return len(t.Devices) - 1
}

// ProcessName returns the name of process pid ("" when unknown).
func (t *Trace) ProcessName(pid int64) string {
	for _, p := range t.Processes {
		if p.PID == pid {
			return p.Name
		}
	}
	return ""
}

// GPUDevices returns the IDs of devices that ran at least one kernel or
// memory operation, in ascending order.
func (t *Trace) GPUDevices() []DeviceID {
	seen := map[DeviceID]bool{}
	for i := range t.Kernels {
		seen[t.Kernels[i].Device] = true
	}
	for i := range t.MemOps {
		seen[t.MemOps[i].Device] = true
	}
	ids := make([]DeviceID, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Shift moves every time of t by d: used to place fixtures on a wall clock
// and to put the traces of a set on a common clock.
func (t *Trace) Shift(d Duration) {
	dt := Time(d)
	for i := range t.Kernels {
		t.Kernels[i].Start += dt
		t.Kernels[i].End += dt
	}
	for i := range t.MemOps {
		t.MemOps[i].Start += dt
		t.MemOps[i].End += dt
	}
	for i := range t.APICalls {
		t.APICalls[i].Start += dt
		t.APICalls[i].End += dt
	}
	for i := range t.Syncs {
		t.Syncs[i].Start += dt
		t.Syncs[i].End += dt
	}
	for i := range t.Ranges {
		t.Ranges[i].Start += dt
		t.Ranges[i].End += dt
	}
	for i := range t.OSCalls {
		t.OSCalls[i].Start += dt
		t.OSCalls[i].End += dt
	}
	for i := range t.GIL {
		t.GIL[i].Start += dt
		t.GIL[i].End += dt
	}
	for i := range t.Collectives {
		t.Collectives[i].Start += dt
		t.Collectives[i].End += dt
	}
	for i := range t.Samples {
		t.Samples[i].Time += dt
	}
	for i := range t.MemEvents {
		t.MemEvents[i].Time += dt
	}
	if t.Capture != (Interval{}) {
		t.Capture.Start += dt
		t.Capture.End += dt
	}
}

// Finalize sorts every table by start (ties broken by track, end and name),
// orders the dimension tables, computes range nesting depths and fills
// capability bits from what the tables hold. Importers call it once, last.
func (t *Trace) Finalize() {
	sort.SliceStable(t.Devices, func(i, j int) bool { return t.Devices[i].ID < t.Devices[j].ID })
	sort.SliceStable(t.Processes, func(i, j int) bool { return t.Processes[i].PID < t.Processes[j].PID })
	t.sortThreads()
	// The tables are independent: sort them concurrently (each sort is
	// deterministic on its own).
	var wg sync.WaitGroup
	par := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	par(func() {
		sortStable(t.Kernels, func(a, b Kernel) int {
			if a.Start != b.Start {
				return cmp.Compare(a.Start, b.Start)
			}
			return cmpChain(cmp.Compare(a.Device, b.Device), cmp.Compare(t.KernelStream(&a), t.KernelStream(&b)),
				cmp.Compare(a.End, b.End), cmp.Compare(a.Correlation, b.Correlation))
		})
	})
	par(func() {
		sortStable(t.MemOps, func(a, b MemOp) int {
			if a.Start != b.Start {
				return cmp.Compare(a.Start, b.Start)
			}
			return cmpChain(cmp.Compare(a.Device, b.Device), cmp.Compare(a.Stream, b.Stream), cmp.Compare(a.End, b.End))
		})
	})
	par(func() {
		sortStable(t.APICalls, func(a, b APICall) int {
			if a.Start != b.Start {
				return cmp.Compare(a.Start, b.Start)
			}
			return cmpChain(cmp.Compare(a.Thread, b.Thread), cmp.Compare(b.End, a.End))
		})
	})
	par(func() {
		sort.SliceStable(t.Syncs, func(i, j int) bool {
			a, b := &t.Syncs[i], &t.Syncs[j]
			if a.Start != b.Start {
				return a.Start < b.Start
			}
			if a.Device != b.Device {
				return a.Device < b.Device
			}
			return a.Stream < b.Stream
		})
	})
	par(func() {
		sort.SliceStable(t.OSCalls, func(i, j int) bool {
			a, b := &t.OSCalls[i], &t.OSCalls[j]
			if a.Start != b.Start {
				return a.Start < b.Start
			}
			if a.Thread != b.Thread {
				return a.Thread < b.Thread
			}
			return a.End > b.End
		})
	})
	par(func() {
		sort.SliceStable(t.GIL, func(i, j int) bool {
			a, b := &t.GIL[i], &t.GIL[j]
			if a.Start != b.Start {
				return a.Start < b.Start
			}
			return a.Thread < b.Thread
		})
	})
	par(func() {
		sort.SliceStable(t.Collectives, func(i, j int) bool {
			a, b := &t.Collectives[i], &t.Collectives[j]
			if a.Start != b.Start {
				return a.Start < b.Start
			}
			if a.Source != b.Source {
				return a.Source < b.Source
			}
			if a.Device != b.Device {
				return a.Device < b.Device
			}
			return a.Stream < b.Stream
		})
	})
	par(func() {
		sort.SliceStable(t.Samples, func(i, j int) bool {
			a, b := &t.Samples[i], &t.Samples[j]
			if a.Time != b.Time {
				return a.Time < b.Time
			}
			return a.Series < b.Series
		})
	})
	par(func() {
		sort.SliceStable(t.MemEvents, func(i, j int) bool { return t.MemEvents[i].Time < t.MemEvents[j].Time })
	})
	par(t.sortRanges)
	wg.Wait()
	t.Configs.dropIndex()
	t.RangeTracks.dropIndex()
	t.APIIdents.dropIndex()
	t.Caps.fillFrom(t)
}

// sortThreads orders threads by (pid, tid) and rewrites every ThreadID.
func (t *Trace) sortThreads() {
	n := len(t.Threads)
	if n == 0 {
		return
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := t.Threads[order[i]], t.Threads[order[j]]
		if a.PID != b.PID {
			return a.PID < b.PID
		}
		return a.TID < b.TID
	})
	remap := make([]ThreadID, n)
	sorted := make([]Thread, n)
	for newIdx, old := range order {
		remap[old] = ThreadID(newIdx)
		sorted[newIdx] = t.Threads[old]
	}
	t.Threads = sorted
	t.threadIndex = nil
	re := func(id ThreadID) ThreadID {
		if id < 0 || int(id) >= n {
			return id
		}
		return remap[id]
	}
	for i := range t.APICalls {
		t.APICalls[i].Thread = re(t.APICalls[i].Thread)
	}
	for i := range t.Ranges {
		t.Ranges[i].Thread = re(t.Ranges[i].Thread)
	}
	for i := range t.OSCalls {
		t.OSCalls[i].Thread = re(t.OSCalls[i].Thread)
	}
	for i := range t.GIL {
		t.GIL[i].Thread = re(t.GIL[i].Thread)
	}
	for i := range t.MemEvents {
		t.MemEvents[i].Thread = re(t.MemEvents[i].Thread)
	}
}

// rangeLane identifies the lane a range nests in.
type rangeLane struct {
	thread ThreadID
	track  TrackID // device, stream, domain
	kind   bool    // true for python frames, which nest separately from ops
}

func laneOf(r *Range) rangeLane {
	return rangeLane{thread: r.Thread, track: r.Track, kind: r.Kind == RangePython}
}

// sortRanges sorts ranges by start (longest first on ties) and computes each
// range's nesting depth within its lane: the number of ranges of the lane
// still open at its start (for properly nested ranges, the usual depth;
// ranges that cross rather than nest are counted while open).
func (t *Trace) sortRanges() {
	sortStable(t.Ranges, func(a, b Range) int {
		if a.Start != b.Start {
			return cmp.Compare(a.Start, b.Start)
		}
		return cmpChain(cmp.Compare(b.End, a.End), cmp.Compare(a.Thread, b.Thread), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	stacks := map[rangeLane][]Time{}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		lane := laneOf(r)
		st := stacks[lane]
		// Drop every range that ended by now; with crossing ranges an
		// ended one need not be on top.
		kept := st[:0]
		for _, end := range st {
			if end > r.Start {
				kept = append(kept, end)
			}
		}
		st = kept
		d := len(st)
		if d > 32767 {
			d = 32767
		}
		r.Depth = int16(d)
		st = append(st, r.End)
		stacks[lane] = st
	}
}
