package kineto

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// The post-pass, run once after the last byte: join the tables, add the
// base time, describe devices, processes and rank, and link the records
// (flows as a correlation fallback; External ids of 2022–23 builds).

var rankInName = regexp.MustCompile(`(?i)(?:^|[^a-z])rank[-_]?(\d{1,6})(?:[^0-9]|$)`)

// RankFromName returns the rank a file name states ("rank-3", "rank3",
// "rank_3", "_rank0.") or NoRank.
func RankFromName(path string) int {
	m := rankInName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return model.NoRank
	}
	v, err := strconv.Atoi(m[1])
	if err != nil {
		return model.NoRank
	}
	return v
}

// finish completes the trace after the last byte: tables, links, base
// time, devices, names, rank, notes, Finalize.
func (b *builder) finish() {
	t := b.t
	b.linkFlows()
	b.joinTables()
	b.relinkExternalIDs()
	b.sortOpShapes()
	if b.hasBase {
		t.Shift(model.Duration(b.base)) // t.Capture is still unset here
		if b.hasWindow {
			b.window.Start += model.Time(b.base)
			b.window.End += model.Time(b.base)
		}
	}
	// Kineto writes epoch µs, or µs relative to an epoch base.
	t.Clock.EpochKnown = b.hasBase || (b.haveTS && b.minTS > 1e17)
	if b.hasWindow {
		t.Capture = b.window
	}
	b.describeDevices()
	b.nameThreads()
	b.setRank()
	b.setProducer()
	b.notes()
	b.w.Flush()
	t.Finalize()
}

// joinTables joins the chunked tables one after another.
// Each join holds its staging chunks and the final table at once (a chunk
// is collectable once copied); joined in parallel, every final table was
// allocated while every staging table was still live, which made the join
// the import's peak (534 MB of heap, 373-438 MB live on a 1 GB trace).
func (b *builder) joinTables() {
	t := b.t
	t.Ranges = join(&b.ranges, t.Ranges)
	t.APICalls = join(&b.apis, t.APICalls)
	t.Kernels = join(&b.kernels, t.Kernels)
	t.MemOps = join(&b.memOps, t.MemOps)
	t.Syncs = join(&b.syncs, t.Syncs)
	t.Collectives = join(&b.colls, t.Collectives)
	t.MemEvents = join(&b.memEvents, t.MemEvents)
}

// bigStaging is the size of a staging table past which its join or drop
// gives the freed chunks back to the OS at once.
const bigStaging = 32 << 20

// join flushes c into dst and, when c was big, gives its chunks back to
// the OS (giveBack).
func join[T any](c *table[T], dst []T) []T {
	big := c.bytes() > bigStaging
	dst = c.flush(dst)
	if big {
		giveBack()
	}
	return dst
}

// drop empties c and, when it was big, gives its chunks back to the OS.
func drop[T any](c *table[T]) {
	big := c.bytes() > bigStaging
	*c = table[T]{}
	if big {
		giveBack()
	}
}

// giveBack collects the heap and returns its free pages to the OS
// (debug.FreeOSMemory). The staging chunks a join or drop frees lie
// scattered between other tables' chunks, so the next final table cannot
// reuse them: without this, at the end of the join the process held every
// staging chunk beside every final table. On the 1 GB trace, tracedx info:
// peak RSS 537-554 -> 446-453 MB (joins), for a few collections of a heap
// of large pointer-free slices (tens of ms).
func giveBack() { debug.FreeOSMemory() }

// describeDevices fills the devices with activity from deviceProperties
// and guesses their vendor.
func (b *builder) describeDevices() {
	t := b.t
	vendor := ""
	switch {
	case b.hipSeen || b.rocmKernel || t.Meta["hip_runtime_version"] != "" || t.Meta["roctracer_version"] != "":
		vendor = "AMD"
	case b.cudaSeen || t.Meta["cuda_runtime_version"] != "" || t.Meta["cupti_version"] != "":
		vendor = "NVIDIA"
	}
	for i := range t.Devices {
		d := &t.Devices[i]
		for _, pr := range b.props {
			if pr.ID == int64(d.ID) {
				d.Name = pr.Name
				d.MemoryBytes = pr.TotalGlobalMem
				d.ComputeMajor, d.ComputeMinor = pr.ComputeMajor, pr.ComputeMinor
				d.SMs = pr.NumSms
				break
			}
		}
		if b.accelDevs[d.ID] {
			d.Kind = model.DeviceAccel
			d.Vendor = "Meta"
			if d.Name == "" {
				d.Name = "MTIA"
			}
			continue
		}
		d.Vendor = vendorOf(d.Name, vendor)
	}
}

// nameThreads adds the processes seen (synthetic pids excluded) and the
// first metadata name of each process and thread.
func (b *builder) nameThreads() {
	t := b.t
	// Processes and thread names.
	pids := map[int64]bool{}
	for _, th := range t.Threads {
		pids[th.PID] = true
	}
	for pid := range pids {
		if pid >= 1<<40 {
			continue
		}
		t.Processes = append(t.Processes, model.Process{PID: pid, Name: b.procName[pid]})
	}
	for i := range t.Threads {
		th := &t.Threads[i]
		if n, ok := b.threadName[laneKey{th.PID, th.TID}]; ok {
			th.Name = n
		}
	}
}

// setRank takes the rank from distributedInfo, else from the file name,
// and gives it to collectives without one.
func (b *builder) setRank() {
	t := b.t
	// Rank.
	if !b.haveRank {
		t.Rank = RankFromName(t.Path)
	}
	for i := range t.Collectives {
		if t.Collectives[i].Rank == model.NoRank && t.Rank >= 0 {
			t.Collectives[i].Rank = int32(t.Rank)
		}
	}
}

func (b *builder) setProducer() {
	t := b.t
	// Producer.
	prod := "PyTorch Profiler (Kineto)"
	var extra []string
	if b.schema != "" {
		extra = append(extra, "schema "+b.schema)
	}
	if v := t.Meta["cuda_runtime_version"]; v != "" {
		extra = append(extra, "CUDA runtime "+v)
	}
	if v := t.Meta["hip_runtime_version"]; v != "" {
		extra = append(extra, "HIP runtime "+v)
	}
	if len(extra) > 0 {
		prod += " " + strings.Join(extra, ", ")
	}
	t.Producer = prod
}

// notes adds the trace-level Caps notes and the unknown-category warnings.
func (b *builder) notes() {
	t := b.t
	// Notes.
	accelOnly := len(b.accelDevs) > 0
	for _, d := range t.Devices {
		if !b.accelDevs[d.ID] {
			accelOnly = false
		}
	}
	if len(t.Kernels) == 0 && len(t.MemOps) == 0 && len(t.Syncs) == 0 && len(b.accelDevs) == 0 {
		if b.profRange > 0 {
			t.Caps.Note(fmt.Sprintf("CUPTI range-profiler trace: %d per-kernel cuda_profiler_range records kept as GPU annotations; no kernel events", b.profRange))
		} else {
			t.Caps.Note("CPU-only trace: no GPU activity was recorded")
		}
	}
	if len(b.accelDevs) > 0 {
		t.Caps.Note("MTIA trace: device activity is on a non-GPU accelerator (Meta MTIA)")
		if accelOnly {
			t.Caps.Add(model.CapAccelOnly)
		}
	}
	if len(b.unknown) > 0 {
		names := make([]string, 0, len(b.unknown))
		for n := range b.unknown {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			b.w.Warn("-", "%d complete events of unknown category %q ignored", b.unknown[n], n)
		}
	}
}

func vendorOf(name, fallback string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "amd") || strings.Contains(n, "radeon") || strings.Contains(n, "instinct") || strings.HasPrefix(n, "mi"):
		return "AMD"
	case strings.Contains(n, "nvidia") || strings.Contains(n, "tesla") || strings.Contains(n, "geforce") ||
		strings.Contains(n, "quadro") || strings.Contains(n, "rtx") || strings.Contains(n, "h100") ||
		strings.Contains(n, "a100") || strings.Contains(n, "h800") || strings.Contains(n, "b200") || strings.Contains(n, "h200"):
		return "NVIDIA"
	}
	return fallback
}

// linkFlows fills missing correlations from ac2g flows: a GPU op without
// args.correlation takes the id of the f flow at its (device, stream, ts), an
// API call the id of the s flow at its (pid, tid, ts). It runs on the staging
// tables, before they are joined, and drops the flows: a trace whose ops all
// carry correlations needs none of them, and they are large (1.6 M flows,
// 65 MB, in the 1 GB trace), so holding them through the join raised its peak.
func (b *builder) linkFlows() {
	t := b.t
	defer drop(&b.flowT)
	if b.flowT.len() == 0 {
		return
	}
	needGPU := b.kernels.any(func(k *model.Kernel) bool { return k.Correlation == 0 }) ||
		b.memOps.any(func(m *model.MemOp) bool { return m.Correlation == 0 })
	needAPI := b.apis.any(func(a *model.APICall) bool { return a.Correlation == 0 && t.CallSource(a) != model.APIAccel })
	if !needGPU && !needAPI {
		return
	}
	type key struct{ pid, tid, ts int64 }
	ends := map[key]int64{}
	starts := map[key]int64{}
	b.flowT.each(func(f *flow) {
		k := key{f.pid, f.tid, f.ts}
		if f.start {
			if _, ok := starts[k]; !ok {
				starts[k] = f.id
			}
		} else if _, ok := ends[k]; !ok {
			ends[k] = f.id
		}
	})
	if needGPU {
		b.kernels.each(func(k *model.Kernel) {
			if k.Correlation == 0 {
				k.Correlation = ends[key{int64(k.Device), int64(t.KernelStream(k)), int64(k.Start)}]
			}
		})
		b.memOps.each(func(m *model.MemOp) {
			if m.Correlation == 0 {
				m.Correlation = ends[key{int64(m.Device), int64(m.Stream), int64(m.Start)}]
			}
		})
		b.colls.each(func(c *model.Collective) {
			if c.Correlation == 0 && c.Source == model.CollFromKernel {
				c.Correlation = ends[key{int64(c.Device), int64(c.Stream), int64(c.Start)}]
			}
		})
	}
	if needAPI {
		b.apis.each(func(a *model.APICall) {
			if a.Correlation == 0 {
				th := t.Thread(a.Thread)
				a.Correlation = starts[key{th.PID, th.TID, int64(a.Start)}]
			}
		})
	}
}

// table collects one table in chunks while the events are read, so that
// growing it never copies what it holds; flush makes it one slice of the

// call is not in the file).
func (b *builder) relinkExternalIDs() {
	t := b.t
	same, both := 0, 0
	count := func(ext, corr int64) {
		if ext != 0 && corr != 0 {
			both++
			if ext == corr {
				same++
			}
		}
	}
	for i := range t.Kernels {
		count(t.Kernels[i].ExternalID, t.Kernels[i].Correlation)
	}
	for i := range t.MemOps {
		count(t.MemOps[i].ExternalID, t.MemOps[i].Correlation)
	}
	if both == 0 || same*10 < both*9 {
		return
	}
	type item struct {
		start, end model.Time
		idx        int32
		api        bool
	}
	byThread := map[model.ThreadID][]item{}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind == model.RangeCPUOp && r.Thread != model.NoThread {
			byThread[r.Thread] = append(byThread[r.Thread], item{r.Start, r.End, int32(i), false})
		}
	}
	for i := range t.APICalls {
		a := &t.APICalls[i]
		if t.CallSource(a) != model.APIAccel && (a.ExternalID == 0 || a.ExternalID == a.Correlation) {
			byThread[a.Thread] = append(byThread[a.Thread], item{a.Start, a.End, int32(i), true})
		}
	}
	threads := make([]model.ThreadID, 0, len(byThread))
	for th := range byThread {
		threads = append(threads, th)
	}
	slices.Sort(threads)
	var stack []item
	for _, th := range threads {
		items := byThread[th]
		slices.SortStableFunc(items, func(x, y item) int {
			switch {
			case x.start != y.start:
				return cmp.Compare(x.start, y.start)
			case x.api != y.api: // ops before calls at the same start
				if x.api {
					return 1
				}
				return -1
			default: // longer first
				return cmp.Compare(y.end, x.end)
			}
		})
		stack = stack[:0]
		for _, it := range items {
			for len(stack) > 0 && stack[len(stack)-1].end < it.start {
				stack = stack[:len(stack)-1]
			}
			if !it.api {
				stack = append(stack, it)
				continue
			}
			ext := int64(0)
			if len(stack) > 0 {
				ext = t.Ranges[stack[len(stack)-1].idx].ExternalID
			}
			t.APICalls[it.idx].ExternalID = ext
		}
	}
	extOf := make(map[int64]int64, len(t.APICalls))
	for i := range t.APICalls {
		if a := &t.APICalls[i]; a.Correlation != 0 && t.CallSource(a) != model.APIAccel {
			extOf[a.Correlation] = a.ExternalID
		}
	}
	for i := range t.Kernels {
		if k := &t.Kernels[i]; k.ExternalID != 0 && k.ExternalID == k.Correlation {
			k.ExternalID = extOf[k.Correlation]
		}
	}
	for i := range t.MemOps {
		if m := &t.MemOps[i]; m.ExternalID != 0 && m.ExternalID == m.Correlation {
			m.ExternalID = extOf[m.Correlation]
		}
	}
	for i := range t.Collectives {
		if c := &t.Collectives[i]; c.Source == model.CollFromKernel && c.ExternalID != 0 && c.ExternalID == c.Correlation {
			c.ExternalID = extOf[c.Correlation]
		}
	}
	t.Caps.Note("GPU-side External ids were correlation ids (2022–23 build); re-derived from the cpu_op enclosing each runtime call")
}
