package nsys

import (
	"fmt"
	"math"
	"slices"

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

	// skipped names the tables skipped for a missing required column (→
	// the column); badTime counts the rows per table dropped for a time
	// outside the model's bounds, firstBadTime the first of them.
	skipped      map[string]string
	badTime      map[string]int
	firstBadTime map[string]int

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
		skipped:         map[string]string{},
		badTime:         map[string]int{},
		firstBadTime:    map[string]int{},
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

// skipTable records that table lacks the required column c and is not read.
func (b *builder) skipTable(table, c string) {
	b.skipped[table] = c
	b.w.Warn("table "+table, "required column %s is missing: table skipped", c)
}

// inRange reports whether start and end are valid model times; a row with
// one outside (start = INT64_MIN, say) is dropped and counted, and finish
// warns once per table.
func (b *builder) inRange(table string, row int, start, end int64) bool {
	if model.ValidTime(model.Time(start)) && model.ValidTime(model.Time(end)) {
		return true
	}
	if b.badTime[table] == 0 {
		b.firstBadTime[table] = row
	}
	b.badTime[table]++
	return false
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
	if utcEpochNs > 0 && utcEpochNs <= int64(model.MaxTime) {
		b.sessionStart, b.hasSession = utcEpochNs, true
	}
}

func (b *builder) setDuration(d int64) {
	if d > 0 && d <= int64(model.MaxTime) {
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
