package nsys

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// The post-pass after the last row: devices, names, notes, Finalize.

func (b *builder) finish() *model.Trace {
	t := b.t
	// Ranges: domains created after their first use, unterminated ranges.
	for _, p := range b.pendingDomain {
		if d, ok := b.nvtxDomains[[2]int64{p.pid, p.dom}]; ok {
			r := &t.Ranges[p.idx]
			tr := t.RangeTrack(r)
			tr.Domain = d
			r.Track = t.InternTrack(tr)
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

	b.devices()
	b.names()

	b.notes()
	for _, tab := range slices.Sorted(maps.Keys(b.badTime)) {
		b.w.Warn(fmt.Sprintf("table %s row %d", tab, b.firstBadTime[tab]),
			"%d rows of table %s dropped: a time is outside ±%d ns", b.badTime[tab], tab, model.MaxTime)
	}
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
	// A skipped table gets its own note instead of "no ... table".
	has := func(tab string) bool { return b.present[tab] || b.skipped[tab] != "" }
	for _, tab := range slices.Sorted(maps.Keys(b.skipped)) {
		c.Note(fmt.Sprintf("table %s lacks its required %s column and was skipped: what it records is not measurable", tab, b.skipped[tab]))
	}
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
	case b.rows[tKernel] == 0 && b.graphLaunch == 0 && b.skipped[tKernel] == "":
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

// devices lists every NVIDIA GPU the export names, then every device with
// activity or counters.
func (b *builder) devices() {
	t := b.t
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

}

// names names threads (ThreadNames, else NVTX) and lists the processes
// seen, named from PROCESSES or their main thread.
func (b *builder) names() {
	t := b.t
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
}
