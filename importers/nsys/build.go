package nsys

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/model"
)

// builder turns raw rows into the model. Rows may arrive in any order and
// with any values: every method checks what it is given, warns about spoiled
// rows with their table and row number, and never panics. finish completes
// the trace (devices, names, notes) and calls Finalize.
type builder struct {
	t *model.Trace
	w *importers.Warner

	// present names the export tables seen (for capability notes).
	present map[string]bool
	// rows counts rows read per table.
	rows map[string]int

	// StringIds: dense when ids are 0..n, else sparse.
	strDense   []string
	strDenseOK []bool
	strSparse  map[int64]string
	sidDense   []model.StringID // StringIds id → trace id + 1 (0 = not yet)
	sidSparse  map[int64]model.StringID

	enumCopy                          map[int64]string // ENUM_CUDA_MEMCPY_OPER, or the built-in copy
	enumMem                           map[int64]string // ENUM_CUDA_MEM_KIND, or the built-in copy
	copyEnumFromFile, memEnumFromFile bool

	meta         map[string]string
	sessionStart int64
	hasSession   bool
	duration     int64

	gpus    []gpuRow
	cudaDev map[[2]int64]int64 // (pid, CUDA ordinal) → TARGET_INFO_GPU.id
	gpuByID map[int64]int64    // TARGET_INFO_GPU.id → cuDevice
	devUsed map[model.DeviceID]bool
	devLast struct {
		pid, dev int64
		id       model.DeviceID
		ok       bool
	}

	procNames       map[int64]string
	threadNameIDs   map[int64]int64 // pid<<24|tid → StringIds id
	nvtxThreadNames map[int64]string
	threads         map[int64]model.ThreadID // globalTid → thread
	lastTid         int64
	hasLastTid      bool
	lastThread      model.ThreadID
	pids            map[int64]bool

	kernNames   map[int64]kernInfo
	lastKernID  int64
	hasLastKern bool
	lastKern    kernInfo
	apiNames    map[int64]apiInfo
	syncByCorr  map[corrKey]model.SyncKind
	memopNames  map[[3]int64]model.StringID
	graphNames  map[int64]model.StringID
	graphLaunch int

	chainFrames map[int64][]chainFrame
	chainIndex  map[int64]int32

	nvtxDomains   map[[2]int64]model.StringID
	pendingDomain []pendingDomain
	openRanges    []int
	maxTime       int64
	hasTime       bool

	metricSeries map[[2]int64]int32
	metricWarned map[[2]int64]bool
	memSeries    map[model.DeviceID]int32
	memTotals    map[[2]int64]int64 // (pid, device) → bytes in use
	memDevTotal  map[model.DeviceID]int64

	syncUnmatched int
	osrtPseudo    int
	gilRows       int
	pythonTables  []string
}

type kernInfo struct {
	name  model.StringID
	comm  bool
	op    model.CollOp
	dtype model.StringID
	ok    bool
}

type apiInfo struct {
	name   model.StringID
	class  model.APIClass
	sync   model.SyncKind
	driver bool
	ok     bool
}

type corrKey struct {
	pid  int64
	corr int64
}

type chainFrame struct {
	depth int64
	name  model.StringID
}

type pendingDomain struct {
	idx      int
	pid, dom int64
}

func newBuilder(t *model.Trace, w *importers.Warner) *builder {
	return &builder{
		t: t, w: w,
		present:         map[string]bool{},
		rows:            map[string]int{},
		strSparse:       map[int64]string{},
		sidSparse:       map[int64]model.StringID{},
		enumCopy:        builtinCopyKind,
		enumMem:         builtinMemKind,
		meta:            map[string]string{},
		gpuByID:         map[int64]int64{},
		devUsed:         map[model.DeviceID]bool{},
		procNames:       map[int64]string{},
		threadNameIDs:   map[int64]int64{},
		nvtxThreadNames: map[int64]string{},
		threads:         map[int64]model.ThreadID{},
		pids:            map[int64]bool{},
		kernNames:       map[int64]kernInfo{},
		apiNames:        map[int64]apiInfo{},
		syncByCorr:      map[corrKey]model.SyncKind{},
		memopNames:      map[[3]int64]model.StringID{},
		graphNames:      map[int64]model.StringID{},
		chainFrames:     map[int64][]chainFrame{},
		chainIndex:      map[int64]int32{},
		nvtxDomains:     map[[2]int64]model.StringID{},
		metricSeries:    map[[2]int64]int32{},
		metricWarned:    map[[2]int64]bool{},
		memSeries:       map[model.DeviceID]int32{},
		memTotals:       map[[2]int64]int64{},
		memDevTotal:     map[model.DeviceID]int64{},
	}
}

func (b *builder) warnRow(table string, row int, format string, args ...any) {
	b.w.Warn(fmt.Sprintf("table %s row %d", table, row), format, args...)
}

// pidOf and tidOf decode a globalTid / globalPid: <hw:8><vm:8><pid:24><tid:24>.
func pidOf(g int64) int64 { return (g >> 24) & 0xFFFFFF }
func tidOf(g int64) int64 { return g & 0xFFFFFF }

func clamp32(v int64) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	if v < math.MinInt32 {
		return math.MinInt32
	}
	return int32(v)
}

func (b *builder) seeTime(ts ...int64) {
	for _, x := range ts {
		if !b.hasTime || x > b.maxTime {
			b.maxTime, b.hasTime = x, true
		}
	}
}

// reserve grows the model table that rows of table go to by n entries.
func (b *builder) reserve(table string, n int64) {
	if n <= 0 || n > 1<<28 {
		return
	}
	k := int(n)
	switch table {
	case tKernel, tGraphTrace:
		b.t.Kernels = slices.Grow(b.t.Kernels, k)
	case tRuntime, tDriver:
		b.t.APICalls = slices.Grow(b.t.APICalls, k)
	case tMemcpy, tMemset:
		b.t.MemOps = slices.Grow(b.t.MemOps, k)
	case tSync:
		b.t.Syncs = slices.Grow(b.t.Syncs, k)
	case tNVTX:
		b.t.Ranges = slices.Grow(b.t.Ranges, k)
	case tOSRT:
		b.t.OSCalls = slices.Grow(b.t.OSCalls, k)
	}
}

// ---- strings ----

// setStringsSize prepares dense storage when ids are 0..maxID.
func (b *builder) setStringsSize(count, maxID int64) {
	if maxID >= 0 && maxID < 2*count+1024 && maxID < 1<<26 {
		b.strDense = make([]string, maxID+1)
		b.strDenseOK = make([]bool, maxID+1)
		b.sidDense = make([]model.StringID, maxID+1)
	}
}

func (b *builder) addString(id int64, s string) {
	if id >= 0 && id < int64(len(b.strDense)) {
		b.strDense[id], b.strDenseOK[id] = s, true
		return
	}
	b.strSparse[id] = s
}

func (b *builder) str(id int64) (string, bool) {
	if id >= 0 && id < int64(len(b.strDense)) {
		return b.strDense[id], b.strDenseOK[id]
	}
	s, ok := b.strSparse[id]
	return s, ok
}

// sid interns StringIds[id] in the trace, once per id.
func (b *builder) sid(id int64) (model.StringID, bool) {
	if id >= 0 && id < int64(len(b.sidDense)) {
		if v := b.sidDense[id]; v != 0 {
			return v - 1, true
		}
		if !b.strDenseOK[id] {
			return model.NoString, false
		}
		v := b.t.Intern(b.strDense[id])
		b.sidDense[id] = v + 1
		return v, true
	}
	if v, ok := b.sidSparse[id]; ok {
		return v, true
	}
	s, ok := b.strSparse[id]
	if !ok {
		return model.NoString, false
	}
	v := b.t.Intern(s)
	b.sidSparse[id] = v
	return v, true
}

// ---- metadata, enums, devices, names ----

func (b *builder) addMeta(name, value string) { b.meta[name] = value }

func (b *builder) setSessionStart(utcEpochNs int64) {
	if utcEpochNs > 0 {
		b.sessionStart, b.hasSession = utcEpochNs, true
	}
}

func (b *builder) setDuration(d int64) {
	if d > 0 {
		b.duration = d
	}
}

// addEnum records one row of an ENUM_* table the importer uses.
func (b *builder) addEnum(table string, id int64, label string) {
	switch table {
	case tEnumMemcpy:
		if !b.copyEnumFromFile {
			b.enumCopy, b.copyEnumFromFile = map[int64]string{}, true
		}
		b.enumCopy[id] = label
	case tEnumMemKind:
		if !b.memEnumFromFile {
			b.enumMem, b.memEnumFromFile = map[int64]string{}, true
		}
		b.enumMem[id] = label
	}
}

func (b *builder) addGPU(row int, r *gpuRow) {
	if r.HasCompute && r.Major == 0 {
		return // a non-NVIDIA adapter (Windows lists Intel / Microsoft Basic Render)
	}
	b.gpus = append(b.gpus, *r)
	cu := r.CuDevice
	if cu < 0 {
		cu = r.ID
	}
	b.gpuByID[r.ID] = cu
}

func (b *builder) addCUDADevice(row int, r *cudaDeviceRow) {
	if b.cudaDev == nil {
		b.cudaDev = map[[2]int64]int64{}
	}
	b.cudaDev[[2]int64{r.PID, r.CudaID}] = r.GPUID
}

func (b *builder) addThreadName(row int, r *threadNameRow) {
	b.threadNameIDs[pidOf(r.GlobalTid)<<24|tidOf(r.GlobalTid)] = r.NameID
}

func (b *builder) addProcess(row int, r *processRow) {
	pid := r.PID
	if pid < 0 {
		pid = pidOf(r.GlobalPid)
	}
	if r.Name != "" {
		b.procNames[pid] = r.Name
	}
}

// device maps a (process, CUDA ordinal) pair to the model's device id: the
// system-wide CUDA ordinal (TARGET_INFO_GPU.cuDevice) when the export maps
// per-process ordinals to GPUs (TARGET_INFO_CUDA_DEVICE), else the ordinal.
func (b *builder) device(pid, dev int64) model.DeviceID {
	l := &b.devLast
	if l.ok && l.pid == pid && l.dev == dev {
		return l.id
	}
	id := dev
	if b.cudaDev != nil {
		if g, ok := b.cudaDev[[2]int64{pid, dev}]; ok {
			if cu, ok := b.gpuByID[g]; ok && cu >= 0 && cu <= math.MaxInt32 {
				id = cu
			}
		}
	}
	d := model.DeviceID(clamp32(id))
	if d < 0 {
		d = model.NoDevice
	}
	*l = struct {
		pid, dev int64
		id       model.DeviceID
		ok       bool
	}{pid, dev, d, true}
	if d != model.NoDevice {
		b.devUsed[d] = true
	}
	return d
}

// activityDevice is device for a GPU activity row, whose device id must be
// a CUDA ordinal; false (with a warning) when it is not.
func (b *builder) activityDevice(table string, row int, pid, dev int64) (model.DeviceID, bool) {
	if dev < 0 || dev > math.MaxInt32 {
		b.warnRow(table, row, "invalid deviceId %d", dev)
		return model.NoDevice, false
	}
	return b.device(pid, dev), true
}

func (b *builder) thread(gtid int64) model.ThreadID {
	if b.hasLastTid && gtid == b.lastTid {
		return b.lastThread
	}
	th, ok := b.threads[gtid]
	if !ok {
		pid, tid := pidOf(gtid), tidOf(gtid)
		th = b.t.ThreadFor(pid, tid)
		b.threads[gtid] = th
		b.pids[pid] = true
	}
	b.lastTid, b.lastThread, b.hasLastTid = gtid, th, true
	return th
}

// ---- CUDA activity ----

func (b *builder) kernelInfo(table string, row int, demangled, short int64) kernInfo {
	if b.hasLastKern && demangled == b.lastKernID {
		if !b.lastKern.ok {
			b.warnRow(table, row, "unknown kernel name string id %d", demangled)
		}
		return b.lastKern
	}
	ki, ok := b.kernNames[demangled]
	if !ok {
		id, found := b.sid(demangled)
		if !found || id == model.NoString {
			// fall back to the short name
			if sid, ok2 := b.sid(short); ok2 && sid != model.NoString {
				id, found = sid, true
			}
		}
		if !found || id == model.NoString {
			ki = kernInfo{name: b.t.Intern(fmt.Sprintf("[unknown kernel name id %d]", demangled))}
		} else {
			ki = kernInfo{name: id, ok: true}
		}
		name := b.t.Str(ki.name)
		if model.IsCommKernelName(name) {
			ki.comm = true
			ki.op = model.CollOpFromName(name)
			ki.dtype = b.t.Intern(ncclDtypeOf(name))
		}
		b.kernNames[demangled] = ki
	}
	if !ki.ok {
		b.warnRow(table, row, "unknown kernel name string id %d", demangled)
	}
	b.lastKernID, b.lastKern, b.hasLastKern = demangled, ki, true
	return ki
}

func (b *builder) kernel(row int, r *kernelRow) {
	if r.End < r.Start {
		b.warnRow(tKernel, row, "kernel ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	ki := b.kernelInfo(tKernel, row, r.Demangled, r.Short)
	short := model.NoString
	if r.Short >= 0 && r.Short != r.Demangled {
		short, _ = b.sid(r.Short)
	}
	pid := pidOf(r.GlobalPid)
	dev, ok := b.activityDevice(tKernel, row, pid, r.DeviceID)
	if !ok {
		return
	}
	graph := r.GraphID
	if graph == 0 && r.GraphNodeID > 0 {
		graph = r.GraphNodeID
	}
	if graph < 0 {
		graph = 0
	}
	b.t.Kernels = append(b.t.Kernels, model.Kernel{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation,
		GraphID:     graph,
		Stream:      model.StreamID(r.StreamID),
		Name:        ki.name,
		ShortName:   short,
		Device:      dev,
		CorrScope:   int32(pid),
		Grid:        [3]int32{clamp32(r.Grid[0]), clamp32(r.Grid[1]), clamp32(r.Grid[2])},
		Block:       [3]int32{clamp32(r.Block[0]), clamp32(r.Block[1]), clamp32(r.Block[2])},
		Registers:   clamp32(r.Registers),
		SharedMem:   clamp32(r.SharedMem),
	})
	if r.End > b.maxTime || !b.hasTime {
		b.seeTime(r.End)
	}
	if ki.comm {
		b.t.Collectives = append(b.t.Collectives, model.Collective{
			Start: model.Time(r.Start), End: model.Time(r.End),
			Bytes: -1, Seq: -1, Correlation: r.Correlation,
			Stream: model.StreamID(r.StreamID), Dtype: ki.dtype, Device: dev,
			Rank: model.NoRank, Op: ki.op, Source: model.CollFromKernel,
		})
	}
}

// graphTrace adds a whole-graph GPU span (--cuda-graph-trace=graph) as a
// kernel named "[CUDA graph N]", so that GPU busy time stays right.
func (b *builder) graphTrace(row int, r *graphTraceRow) {
	if r.End < r.Start {
		b.warnRow(tGraphTrace, row, "graph launch ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	name, ok := b.graphNames[r.GraphID]
	if !ok {
		name = b.t.Intern(fmt.Sprintf("[CUDA graph %d]", r.GraphID))
		b.graphNames[r.GraphID] = name
	}
	pid := pidOf(r.GlobalPid)
	dev, ok := b.activityDevice(tGraphTrace, row, pid, r.DeviceID)
	if !ok {
		return
	}
	g := r.GraphID
	if g < 0 {
		g = 0
	}
	b.t.Kernels = append(b.t.Kernels, model.Kernel{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation, GraphID: g,
		Stream: model.StreamID(r.StreamID), Name: name,
		Device: dev, CorrScope: int32(pid),
	})
	b.graphLaunch++
	b.seeTime(r.End)
}

func (b *builder) apiInfo(table string, row int, nameID int64) apiInfo {
	ai, ok := b.apiNames[nameID]
	if !ok {
		s, found := b.str(nameID)
		if !found || s == "" {
			s = fmt.Sprintf("[unknown API name id %d]", nameID)
		} else {
			ai.ok = true
		}
		n := model.StripAPIVersion(s)
		ai.name = b.t.Intern(n)
		ai.class = model.ClassifyAPI(n)
		ai.sync = syncKindOfAPI(n)
		ai.driver = strings.HasPrefix(n, "cu") && !strings.HasPrefix(n, "cuda")
		b.apiNames[nameID] = ai
	}
	if !ai.ok {
		b.warnRow(table, row, "unknown API name string id %d", nameID)
	}
	return ai
}

func (b *builder) runtime(table string, row int, r *runtimeRow) {
	if r.End < r.Start {
		b.warnRow(table, row, "API call ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	ai := b.apiInfo(table, row, r.NameID)
	src := model.APIRuntime
	switch {
	case r.EventClass == 1 || table == tDriver:
		src = model.APIDriver
	case r.EventClass == 0:
	case ai.driver:
		src = model.APIDriver
	}
	pid := pidOf(r.GlobalTid)
	b.t.APICalls = append(b.t.APICalls, model.APICall{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation, Name: ai.name,
		Thread: b.thread(r.GlobalTid), CorrScope: int32(pid),
		Class: ai.class, Source: src,
	})
	if ai.sync != model.SyncUnknown && r.Correlation != 0 {
		b.syncByCorr[corrKey{pid, r.Correlation}] = ai.sync
	}
	if r.End > b.maxTime || !b.hasTime {
		b.seeTime(r.End)
	}
}

func (b *builder) copyKind(v int64) (model.MemOpKind, string, bool) {
	l, ok := b.enumCopy[v]
	if !ok {
		return model.MemUnknown, "", false
	}
	return copyKindOf(l), l, true
}

func (b *builder) memKind(v int64) (model.MemKind, string, bool) {
	l, ok := b.enumMem[v]
	if !ok {
		return model.MemKindUnknown, "", false
	}
	return memKindOf(l), l, true
}

func (b *builder) memcpy(row int, r *memcpyRow) {
	if r.End < r.Start {
		b.warnRow(tMemcpy, row, "memcpy ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	kind, _, ok := b.copyKind(r.CopyKind)
	if !ok {
		b.warnRow(tMemcpy, row, "unknown copyKind %d", r.CopyKind)
	}
	src, _, ok := b.memKind(r.SrcKind)
	if !ok {
		b.warnRow(tMemcpy, row, "unknown srcKind %d", r.SrcKind)
	}
	dst, _, ok := b.memKind(r.DstKind)
	if !ok {
		b.warnRow(tMemcpy, row, "unknown dstKind %d", r.DstKind)
	}
	bytes := r.Bytes
	if bytes < -1 {
		b.warnRow(tMemcpy, row, "negative byte count %d", bytes)
		bytes = -1
	}
	key := [3]int64{int64(kind), int64(src), int64(dst)}
	name, ok := b.memopNames[key]
	if !ok {
		name = b.t.Intern(fmt.Sprintf("Memcpy %s (%s -> %s)", kind, titleKind(src), titleKind(dst)))
		b.memopNames[key] = name
	}
	pid := pidOf(r.GlobalPid)
	dev, ok := b.activityDevice(tMemcpy, row, pid, r.DeviceID)
	if !ok {
		return
	}
	b.t.MemOps = append(b.t.MemOps, model.MemOp{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation, Bytes: bytes,
		Stream: model.StreamID(r.StreamID), Name: name,
		Device: dev, CorrScope: int32(pid),
		Kind: kind, Src: src, Dst: dst,
	})
	b.seeTime(r.End)
}

func titleKind(k model.MemKind) string {
	s := k.String()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (b *builder) memset(row int, r *memsetRow) {
	if r.End < r.Start {
		b.warnRow(tMemset, row, "memset ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	dst := model.MemKindUnknown
	if r.MemKind >= 0 {
		var ok bool
		if dst, _, ok = b.memKind(r.MemKind); !ok {
			b.warnRow(tMemset, row, "unknown memKind %d", r.MemKind)
		}
	}
	bytes := r.Bytes
	if bytes < -1 {
		b.warnRow(tMemset, row, "negative byte count %d", bytes)
		bytes = -1
	}
	key := [3]int64{-1, 0, int64(dst)}
	name, ok := b.memopNames[key]
	if !ok {
		name = b.t.Intern(fmt.Sprintf("Memset (%s)", titleKind(dst)))
		b.memopNames[key] = name
	}
	pid := pidOf(r.GlobalPid)
	dev, ok := b.activityDevice(tMemset, row, pid, r.DeviceID)
	if !ok {
		return
	}
	b.t.MemOps = append(b.t.MemOps, model.MemOp{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation, Bytes: bytes,
		Stream: model.StreamID(r.StreamID), Name: name,
		Device: dev, CorrScope: int32(pid),
		Kind: model.MemSet, Dst: dst,
	})
	b.seeTime(r.End)
}

// sync classifies a synchronisation record by its correlated API call; the
// RUNTIME table is read first.
func (b *builder) sync(row int, r *syncRow) {
	if r.End < r.Start {
		b.warnRow(tSync, row, "synchronization ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	pid := pidOf(r.GlobalPid)
	kind, ok := b.syncByCorr[corrKey{pid, r.Correlation}]
	if !ok {
		b.syncUnmatched++
	}
	dev := model.NoDevice
	if r.DeviceID >= 0 && r.DeviceID < 0xFFFFFFFF && r.DeviceID <= math.MaxInt32 {
		dev = b.device(pid, r.DeviceID)
	}
	stream := model.StreamID(r.StreamID)
	if r.StreamID < 0 || r.StreamID == 0xFFFFFFFF {
		stream = model.NoStream
	}
	b.t.Syncs = append(b.t.Syncs, model.SyncEvent{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Correlation: r.Correlation, Stream: stream, Device: dev,
		CorrScope: int32(pid), Kind: kind,
	})
	b.seeTime(r.End)
}

// ---- NVTX ----

// NVTX event types (ENUM_NSYS_EVENT_TYPE; ids never renumbered).
const (
	nvtxCategory     = 33
	nvtxMark         = 34
	nvtxThreadName   = 39
	nvtxPushPop      = 59
	nvtxStartEnd     = 60
	nvtxDomainCreate = 75
)

func (b *builder) nvtxText(row int, r *nvtxRow) model.StringID {
	if r.TextValid {
		return b.t.Intern(r.Text)
	}
	if r.TextID >= 0 {
		id, ok := b.sid(r.TextID)
		if !ok {
			b.warnRow(tNVTX, row, "unknown text string id %d", r.TextID)
		}
		return id
	}
	return model.NoString
}

func (b *builder) nvtx(row int, r *nvtxRow) {
	pid := pidOf(r.GlobalTid)
	switch r.EventType {
	case nvtxDomainCreate:
		b.nvtxDomains[[2]int64{pid, r.DomainID}] = b.nvtxText(row, r)
		return
	case nvtxThreadName:
		if r.TextValid && r.Text != "" {
			b.nvtxThreadNames[pid<<24|tidOf(r.GlobalTid)] = r.Text
		}
		return
	case nvtxPushPop, nvtxStartEnd, nvtxMark:
	default:
		return
	}
	kind := model.RangeNVTX
	end := r.End
	open := false
	switch {
	case r.EventType == nvtxMark:
		kind, end = model.RangeMark, r.Start
	case !r.EndValid:
		open, end = true, r.Start
	case r.End < r.Start:
		b.warnRow(tNVTX, row, "range ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	rg := model.Range{
		Start: model.Time(r.Start), End: model.Time(end),
		Name:   b.nvtxText(row, r),
		Thread: b.thread(r.GlobalTid),
		Stream: model.NoStream, Device: model.NoDevice, Kind: kind,
	}
	idx := len(b.t.Ranges)
	if r.DomainID != 0 {
		if d, ok := b.nvtxDomains[[2]int64{pid, r.DomainID}]; ok {
			rg.Domain = d
		} else {
			b.pendingDomain = append(b.pendingDomain, pendingDomain{idx, pid, r.DomainID})
		}
	}
	b.t.Ranges = append(b.t.Ranges, rg)
	if open {
		b.openRanges = append(b.openRanges, idx)
	}
	b.seeTime(end)
}

// ---- OS runtime ----

func (b *builder) addCallchainFrame(row int, r *callchainRow) {
	name := model.NoString
	if id, ok := b.sid(r.Symbol); ok && id != model.NoString {
		name = id
	} else if id, ok := b.sid(r.Module); ok && id != model.NoString {
		name = id
	} else {
		name = b.t.Intern("[unknown]")
	}
	b.chainFrames[r.ID] = append(b.chainFrames[r.ID], chainFrame{r.Depth, name})
}

// chain returns the t.CallChains index of an OSRT call chain (-1 = none).
func (b *builder) chain(id int64) int32 {
	if id <= 0 {
		return -1
	}
	if i, ok := b.chainIndex[id]; ok {
		return i
	}
	fr, ok := b.chainFrames[id]
	if !ok || len(b.t.CallChains) >= math.MaxInt32 {
		b.chainIndex[id] = -1
		return -1
	}
	sort.SliceStable(fr, func(i, j int) bool { return fr[i].depth < fr[j].depth })
	names := make([]model.StringID, len(fr))
	for i, f := range fr {
		names[i] = f.name
	}
	i := int32(len(b.t.CallChains))
	b.t.CallChains = append(b.t.CallChains, names)
	b.chainIndex[id] = i
	return i
}

func (b *builder) osrt(row int, r *osrtRow) {
	if r.EventClass == 31 || r.EventClass == 32 {
		b.osrtPseudo++ // OS runtime start / finish pseudo-events
		return
	}
	if r.End < r.Start {
		b.warnRow(tOSRT, row, "OS runtime call ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	name, ok := b.sid(r.NameID)
	if !ok {
		b.warnRow(tOSRT, row, "unknown name string id %d", r.NameID)
		name = b.t.Intern(fmt.Sprintf("[unknown OS runtime name id %d]", r.NameID))
	}
	b.t.OSCalls = append(b.t.OSCalls, model.OSCall{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Name: name, Thread: b.thread(r.GlobalTid), CallChain: b.chain(r.CallchainID),
	})
	b.seeTime(r.End)
}

// ---- counters ----

var gpuInTypeName = regexp.MustCompile(`(?i)\bGPU\s*#?\s*(\d+)`)
var unitSuffix = regexp.MustCompile(`\[([^\]]*)\]\s*$`)

func (b *builder) addMetricDef(row int, r *metricDefRow) {
	key := [2]int64{r.TypeID, r.MetricID}
	if _, ok := b.metricSeries[key]; ok {
		return
	}
	dev := model.NoDevice
	if m := gpuInTypeName.FindStringSubmatch(r.TypeName); m != nil {
		// "GPU N" is taken to be TARGET_INFO_GPU.id (unverified: no real
		// export with GPU metrics was available), mapped to its cuDevice.
		if n, err := strconv.ParseInt(m[1], 10, 32); err == nil {
			dev = model.DeviceID(n)
			if cu, ok := b.gpuByID[n]; ok && cu >= 0 && cu <= math.MaxInt32 {
				dev = model.DeviceID(cu)
			}
		}
	} else if len(b.gpus) == 1 {
		cu := b.gpus[0].CuDevice
		if cu < 0 {
			cu = b.gpus[0].ID
		}
		dev = model.DeviceID(clamp32(cu))
	}
	unit := ""
	if m := unitSuffix.FindStringSubmatch(r.MetricName); m != nil {
		unit = m[1]
	}
	name := r.MetricName
	if name == "" {
		name = fmt.Sprintf("metric %d", r.MetricID)
	}
	b.metricSeries[key] = int32(len(b.t.Counters))
	b.t.Counters = append(b.t.Counters, model.CounterSeries{Name: b.t.Intern(name), Unit: b.t.Intern(unit), Device: dev})
}

func (b *builder) metric(row int, r *metricRow) {
	key := [2]int64{r.TypeID, r.MetricID}
	s, ok := b.metricSeries[key]
	if !ok {
		if !b.metricWarned[key] {
			b.metricWarned[key] = true
			b.warnRow(tGPUMetrics, row, "metric (typeId %d, metricId %d) not in %s", r.TypeID, r.MetricID, tGPUMetricsInfo)
		}
		return
	}
	if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
		b.warnRow(tGPUMetrics, row, "metric value is not a number")
		return
	}
	b.t.Samples = append(b.t.Samples, model.CounterSample{Time: model.Time(r.Timestamp), Value: r.Value, Series: s})
	b.seeTime(r.Timestamp)
}

func (b *builder) memUsage(row int, r *memUsageRow) {
	var sign int64
	switch r.Op {
	case 0:
		sign = 1
	case 1:
		sign = -1
	default:
		b.warnRow(tMemUsage, row, "unknown memoryOperationType %d", r.Op)
		return
	}
	if r.Bytes < 0 {
		b.warnRow(tMemUsage, row, "negative byte count %d", r.Bytes)
		return
	}
	pid := pidOf(r.GlobalPid)
	dev, ok := b.activityDevice(tMemUsage, row, pid, r.DeviceID)
	if !ok {
		return
	}
	key := [2]int64{pid, int64(dev)}
	b.memTotals[key] += sign * r.Bytes
	b.memDevTotal[dev] += sign * r.Bytes
	b.t.MemEvents = append(b.t.MemEvents, model.MemEvent{
		Time: model.Time(r.Start), Bytes: sign * r.Bytes, Addr: uint64(r.Address),
		TotalAllocated: b.memTotals[key], TotalReserved: -1,
		Thread: model.NoThread, Device: dev,
	})
	s, ok := b.memSeries[dev]
	if !ok {
		s = int32(len(b.t.Counters))
		b.memSeries[dev] = s
		b.t.Counters = append(b.t.Counters, model.CounterSeries{Name: b.t.Intern("CUDA memory in use"), Unit: b.t.Intern("bytes"), Device: dev})
	}
	b.t.Samples = append(b.t.Samples, model.CounterSample{Time: model.Time(r.Start), Value: float64(b.memDevTotal[dev]), Series: s})
	b.seeTime(r.Start)
}

// ---- Python ----

// gilState classifies a GIL table's state text.
func gilState(s string) (model.GILState, bool) {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "wait") || strings.Contains(l, "acquir") || strings.Contains(l, "take"):
		return model.GILWaiting, true
	case strings.Contains(l, "hold") || strings.Contains(l, "held") || strings.Contains(l, "own"):
		return model.GILHeld, true
	}
	return model.GILWaiting, false
}

func (b *builder) gil(table string, row int, r *gilRow) {
	if r.End < r.Start {
		b.warnRow(table, row, "GIL interval ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	st, ok := gilState(r.State)
	if !ok {
		b.warnRow(table, row, "unknown GIL state %q", r.State)
		return
	}
	b.t.GIL = append(b.t.GIL, model.GILInterval{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Thread: b.thread(r.GlobalTid), State: st,
	})
	b.gilRows++
	b.seeTime(r.End)
}

// ---- finish ----

func (b *builder) finish() *model.Trace {
	t := b.t
	// Ranges: domains created after their first use, unterminated ranges.
	for _, p := range b.pendingDomain {
		if d, ok := b.nvtxDomains[[2]int64{p.pid, p.dom}]; ok {
			t.Ranges[p.idx].Domain = d
		}
	}
	if len(b.openRanges) > 0 {
		for _, i := range b.openRanges {
			if model.Time(b.maxTime) > t.Ranges[i].Start {
				t.Ranges[i].End = model.Time(b.maxTime)
			}
		}
		b.w.Warn("table "+tNVTX, "%d NVTX ranges have no end (unterminated); they are closed at the last timestamp of the trace", len(b.openRanges))
	}

	// Producer, metadata, clock.
	t.Producer = "Nsight Systems export"
	if v := b.meta["EXPORT_PRODUCT_VERSION"]; v != "" {
		parts := strings.Split(v, ".")
		if len(parts) > 3 {
			parts = parts[:3]
		}
		t.Producer = "nsys " + strings.Join(parts, ".")
		t.Meta["nsys_version"] = v
	}
	if v := b.meta["EXPORT_SCHEMA_VERSION"]; v != "" {
		t.Meta["nsys_schema_version"] = v
	}
	if v := b.meta["EXPORT_PLATFORM"]; v != "" {
		t.Meta["nsys_platform"] = v
	}
	normalized := strings.EqualFold(b.meta["EXPORT_PARAM_TIME_NORMALIZE"], "true")
	switch {
	case normalized:
		t.Clock = model.Clock{Origin: 0, EpochKnown: true}
		t.Meta["nsys_time_normalized"] = "true"
	case b.hasSession:
		t.Clock = model.Clock{Origin: model.Time(b.sessionStart), EpochKnown: true}
	}
	if b.duration > 0 && !normalized {
		t.Capture = model.Interval{Start: 0, End: model.Time(b.duration)}
	}

	// Devices: every NVIDIA GPU the export lists, and every device with activity.
	seen := map[model.DeviceID]bool{}
	for _, g := range b.gpus {
		cu := g.CuDevice
		if cu < 0 {
			cu = g.ID
		}
		id := model.DeviceID(clamp32(cu))
		if id < 0 || seen[id] {
			continue
		}
		seen[id] = true
		t.Devices = append(t.Devices, model.Device{
			ID: id, Name: g.Name, Kind: model.DeviceGPU, Vendor: "NVIDIA",
			SMs: clamp32(g.SMs), MemoryBytes: max(g.Memory, 0),
			ComputeMajor: clamp32(g.Major), ComputeMinor: clamp32(g.Minor),
			MemoryBandwidth: math.Max(g.Bandwidth, 0), BusID: g.Bus,
		})
	}
	used := make([]model.DeviceID, 0, len(b.devUsed))
	for d := range b.devUsed {
		used = append(used, d)
	}
	sort.Slice(used, func(i, j int) bool { return used[i] < used[j] })
	for _, d := range used {
		if !seen[d] {
			seen[d] = true
			t.Devices = append(t.Devices, model.Device{ID: d, Kind: model.DeviceGPU, Vendor: "NVIDIA"})
		}
	}
	for i := range t.Counters {
		if d := t.Counters[i].Device; d != model.NoDevice && !seen[d] {
			seen[d] = true
			t.Devices = append(t.Devices, model.Device{ID: d, Kind: model.DeviceGPU, Vendor: "NVIDIA"})
		}
	}

	// Thread and process names.
	for i := range t.Threads {
		th := &t.Threads[i]
		key := th.PID<<24 | th.TID
		if id, ok := b.threadNameIDs[key]; ok {
			if s, ok := b.str(id); ok {
				th.Name = s
			}
		}
		if th.Name == "" {
			th.Name = b.nvtxThreadNames[key]
		}
	}
	for i := range t.Kernels {
		b.pids[int64(t.Kernels[i].CorrScope)] = true
	}
	for i := range t.MemOps {
		b.pids[int64(t.MemOps[i].CorrScope)] = true
	}
	pids := make([]int64, 0, len(b.pids))
	for p := range b.pids {
		pids = append(pids, p)
	}
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	for _, p := range pids {
		name, ok := b.procNames[p]
		if !ok {
			if id, ok2 := b.threadNameIDs[p<<24|p]; ok2 {
				name, _ = b.str(id)
			}
		}
		t.Processes = append(t.Processes, model.Process{PID: p, Name: name})
	}

	b.notes()
	if b.syncUnmatched > 0 {
		b.w.Warn("table "+tSync, "%d synchronization records have no correlated CUDA API call; their kind is unknown", b.syncUnmatched)
	}
	b.w.Flush()
	t.Finalize()
	return t
}

// notes says in t.Caps what the export could not show.
func (b *builder) notes() {
	c := &b.t.Caps
	has := func(tab string) bool { return b.present[tab] }
	events := false
	for _, tab := range []string{tKernel, tRuntime, tDriver, tMemcpy, tMemset, tSync, tNVTX, tOSRT, tGPUMetrics, tMemUsage, tGraphTrace} {
		if b.rows[tab] > 0 {
			events = true
		}
	}
	if !events && b.gilRows == 0 {
		c.Note("the export holds no events: nothing about this run is measurable")
	}
	switch {
	case !has(tKernel) && b.graphLaunch == 0:
		c.Note("no CUDA kernel table (CUPTI_ACTIVITY_KIND_KERNEL): GPU kernel activity is not measurable (no --trace=cuda, or no kernel ran)")
	case b.rows[tKernel] == 0 && b.graphLaunch == 0:
		c.Note("the CUDA kernel table is empty: GPU kernel activity is not measurable")
	}
	if b.graphLaunch > 0 {
		c.Note(fmt.Sprintf("%d CUDA graph launches traced as whole graphs (--cuda-graph-trace=graph): kernels inside them are not measurable one by one", b.graphLaunch))
	}
	if !has(tRuntime) && !has(tDriver) {
		c.Note("no CUDA API table (CUPTI_ACTIVITY_KIND_RUNTIME): launch, sync and memcpy calls are not measurable")
	}
	if !has(tNVTX) {
		c.Note("no NVTX_EVENTS table: annotations (NVTX ranges) are not measurable")
	}
	if !has(tOSRT) {
		c.Note("no OSRT_API table: OS runtime calls are not measurable (no --trace=osrt)")
	}
	if !has(tGPUMetrics) {
		c.Note("no GPU_METRICS table: GPU hardware metrics are not measurable (no --gpu-metrics-devices)")
	}
	if !has(tMemUsage) {
		c.Note("no CUDA_GPU_MEMORY_USAGE_EVENTS table: GPU memory usage is not measurable (no --cuda-memory-usage=true)")
	}
	if b.gilRows == 0 {
		if has(tOSRT) {
			c.Note("no Python GIL table: GIL contention is only inferable from OS runtime waits on Python threads")
		} else {
			c.Note("no Python GIL table: GIL contention is not measurable")
		}
	}
	for _, s := range b.pythonTables {
		c.Note(fmt.Sprintf("Python table %s is present but not imported (its layout is not known to this importer)", s))
	}
}
