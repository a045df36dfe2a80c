package memcpy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// uvmBlock is the granularity at which the driver migrates unified memory
// (a 2 MiB virtual-address block); thrashing is judged per block.
const uvmBlock = 2 << 20

// uvmStats sums the unified-memory migrations of one device.
type uvmStats struct {
	n, faults        int
	bytes            int64
	dur, faultDur    model.Duration
	byDir            map[model.MemOpKind][2]int64 // count, bytes
	byCause          map[model.MigrationCause]int
	thrashBlocks     int   // blocks that came back after leaving (2+ reversals)
	thrashMigrations int   // migrations after a block's second reversal
	addressed        bool  // the capture gives addresses
	top              []int // indices of the longest migrations
}

// checkUVM reports the unified-memory migrations of each device of t over
// the whole capture (first-touch migrations are part of unified memory's
// cost): count, bytes, time, direction, why they moved, and thrashing.
func checkUVM(p *detectors.Pass, t *model.Trace, span model.Interval, prod detectors.ProducerInfo) {
	per := uvmByDevice(t)
	if len(per) == 0 {
		return
	}
	devs := make([]model.DeviceID, 0, len(per))
	for d := range per {
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	wall := span.Len()
	kernelTime := map[model.DeviceID]model.Duration{}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		kernelTime[k.Device] += model.Duration(k.End - k.Start)
	}
	for _, dev := range devs {
		s := per[dev]
		if s.byCause[model.MigrationUserPrefetch] == s.n && s.thrashBlocks == 0 {
			continue // only explicit prefetches: unified memory used as intended
		}
		share := detectors.Pct(float64(s.faultDur), float64(wall))
		kt := kernelTime[dev]
		// A warning when pages ping-pong, when fault-driven migrations take
		// warn_pct of the capture, or when they take longer than all the
		// kernels of the device: moving pages is then its main work.
		sev := model.SevInfo
		if s.thrashBlocks > 0 || share >= p.Param("warn_pct") || s.faultDur > kt {
			sev = model.SevWarning
		}
		f := model.Finding{
			Severity:       sev,
			Title:          fmt.Sprintf("%d unified-memory migrations moved %s on device %d (%s)", s.n, bytesText(s.bytes), dev, s.dur),
			Message:        s.message(dev, share, wall, kt),
			Recommendation: uvmAdvice(prod, s.thrashBlocks > 0, s.byCause[model.MigrationEviction] > 0),
			Confidence:     model.Measured,
			Metrics: []model.Metric{
				{Name: "uvm_migrations", Value: float64(s.n), Unit: "count"},
				{Name: "uvm_bytes", Value: float64(s.bytes), Unit: "bytes"},
				{Name: "uvm_ns", Value: float64(s.dur), Unit: "ns"},
				{Name: "uvm_htod_bytes", Value: float64(s.byDir[model.MemHtoD][1]), Unit: "bytes"},
				{Name: "uvm_dtoh_bytes", Value: float64(s.byDir[model.MemDtoH][1]), Unit: "bytes"},
				{Name: "uvm_fault_migrations", Value: float64(s.faults), Unit: "count"},
				{Name: "uvm_fault_ns", Value: float64(s.faultDur), Unit: "ns"},
				{Name: "uvm_fault_share", Value: share, Unit: "%", Num: float64(s.faultDur), Den: float64(wall)},
				{Name: "uvm_thrash_blocks", Value: float64(s.thrashBlocks), Unit: "count"},
				{Name: "kernel_ns", Value: float64(kt), Unit: "ns"},
			},
			Evidence: s.evidence(t),
		}
		p.Report(f)
	}
}

// uvmBlockState follows one 2 MiB block: the direction it last moved and
// how often it changed direction.
type uvmBlockState struct {
	last      model.MemOpKind
	reversals int
}

// uvmByDevice sums the unified-memory migrations of t per device.
func uvmByDevice(t *model.Trace) map[model.DeviceID]*uvmStats {
	per := map[model.DeviceID]*uvmStats{}
	blocks := map[model.DeviceID]map[uint64]*uvmBlockState{}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		if m.Kind != model.MemUVM {
			continue
		}
		s := per[m.Device]
		if s == nil {
			s = &uvmStats{byDir: map[model.MemOpKind][2]int64{}, byCause: map[model.MigrationCause]int{}}
			per[m.Device] = s
			blocks[m.Device] = map[uint64]*uvmBlockState{}
		}
		s.add(m, i, blocks[m.Device])
	}
	return per
}

// add counts migration m (index i) and follows its block for thrashing.
func (s *uvmStats) add(m *model.MemOp, i int, blocks map[uint64]*uvmBlockState) {
	d := model.Duration(m.End - m.Start)
	s.n++
	s.dur += d
	if m.Bytes > 0 {
		s.bytes += m.Bytes
	}
	c := s.byDir[m.UVMDir]
	s.byDir[m.UVMDir] = [2]int64{c[0] + 1, c[1] + max(m.Bytes, 0)}
	s.byCause[m.UVMCause]++
	if m.UVMCause == model.MigrationPageFault || m.UVMCause == model.MigrationSpeculative || m.UVMCause == model.MigrationEviction {
		s.faults++
		s.faultDur += d
	}
	s.top = append(s.top, i)
	if m.Addr == 0 || (m.UVMDir != model.MemHtoD && m.UVMDir != model.MemDtoH) {
		return
	}
	s.addressed = true
	b := blocks[m.Addr/uvmBlock]
	if b == nil {
		blocks[m.Addr/uvmBlock] = &uvmBlockState{last: m.UVMDir}
		return
	}
	if b.last != m.UVMDir {
		b.reversals++
		b.last = m.UVMDir
		if b.reversals == 2 {
			s.thrashBlocks++
		}
	}
	if b.reversals >= 2 {
		s.thrashMigrations++
	}
}

// message says what moved on dev, in which direction, why, against the
// device's kernel time kt, and whether blocks thrashed.
func (s *uvmStats) message(dev model.DeviceID, share float64, wall, kt model.Duration) string {
	var dirs []string
	for _, k := range []model.MemOpKind{model.MemHtoD, model.MemDtoH, model.MemDtoD, model.MemUnknown} {
		if c, ok := s.byDir[k]; ok {
			name := k.String()
			if k == model.MemUnknown {
				name = "direction unknown"
			}
			dirs = append(dirs, fmt.Sprintf("%s %d (%s)", name, c[0], bytesText(c[1])))
		}
	}
	var causes []string
	for c := model.MigrationUnknown; c <= model.MigrationAccessCounters; c++ {
		if n := s.byCause[c]; n > 0 && c != model.MigrationUnknown {
			causes = append(causes, fmt.Sprintf("%d %s", n, c))
		}
	}
	msg := fmt.Sprintf("%d unified-memory migrations on device %d moved %s in %s: %s.",
		s.n, dev, bytesText(s.bytes), s.dur, strings.Join(dirs, ", "))
	if len(causes) > 0 {
		msg += fmt.Sprintf(" Why they moved: %s; the %d driven by faults, speculative prefetch around faults or eviction took %s, %s%% of the %s capture.",
			strings.Join(causes, ", "), s.faults, s.faultDur, detectors.FormatFloat(share), wall)
	}
	msg += fmt.Sprintf(" The device's kernels ran %s in all.", kt)
	switch {
	case s.thrashBlocks > 0:
		msg += fmt.Sprintf(" Thrashing: %d 2 MiB blocks moved back and forth (to the device, to the host and back again), %d migrations after the first round trip.",
			s.thrashBlocks, s.thrashMigrations)
	case s.addressed:
		msg += " No block moved back and forth more than once (no thrashing)."
	default:
		msg += " The capture has no page addresses, so thrashing cannot be told."
	}
	return msg
}

// evidence is the longest migrations, longest first.
func (s *uvmStats) evidence(t *model.Trace) []model.Evidence {
	sort.SliceStable(s.top, func(a, b int) bool {
		ma, mb := &t.MemOps[s.top[a]], &t.MemOps[s.top[b]]
		return ma.End-ma.Start > mb.End-mb.Start
	})
	var ev []model.Evidence
	for _, i := range s.top[:min(len(s.top), maxEvidence)] {
		m := &t.MemOps[i]
		ev = append(ev, model.Evidence{Rank: t.Rank, Device: m.Device, Stream: m.Stream, Thread: -1, Start: m.Start, End: m.End,
			Note: fmt.Sprintf("unified-memory %s migration of %s (%s) at %#x takes %s", m.UVMDir, bytesText(m.Bytes), m.UVMCause, m.Addr, ivLen(m.Start, m.End))})
	}
	return ev
}

// uvmAdvice is the recommendation for unified-memory migrations, by producer.
func uvmAdvice(prod detectors.ProducerInfo, thrash, evicted bool) string {
	var s []string
	switch prod.Producer {
	case detectors.ProducerOpenACC, detectors.ProducerOpenMP:
		s = append(s, "the compiler placed the arrays in managed memory (nvhpc -gpu=managed / -gpu=mem:unified, or unified shared memory): manage data explicitly with data regions ("+
			map[bool]string{true: "acc data copyin/copyout", false: "omp target data map"}[prod.Producer == detectors.ProducerOpenACC]+") so that arrays move once, not page by page",
			"or prefetch with cudaMemPrefetchAsync before the kernels and before the host reads results")
	case detectors.ProducerJulia:
		s = append(s, "use device arrays (CuArray without unified=true) and copy results once with Array(x), or prefetch unified buffers (CUDA.prefetch)")
	case detectors.ProducerCuPy, detectors.ProducerPython, detectors.ProducerPyTorch, detectors.ProducerJAX:
		s = append(s, "allocate device memory instead of managed memory (a managed allocator such as cupy.cuda.malloc_managed or a custom allocator is in use), or prefetch with cudaMemPrefetchAsync before the GPU and the host touch the data")
	default:
		s = append(s, "prefetch managed buffers with cudaMemPrefetchAsync to the processor that touches them next (the GPU before the kernels, cudaCpuDeviceId before the host reads results)",
			"set cudaMemAdvise hints (SetPreferredLocation, SetReadMostly, SetAccessedBy) for data both sides use",
			"or use cudaMalloc + cudaMemcpyAsync for data that moves in bulk")
	}
	if thrash {
		s = append(s, "stop the ping-pong: the same pages are touched alternately by host and device; keep them on one side (SetPreferredLocation + SetAccessedBy maps them remotely instead of migrating)")
	}
	if evicted {
		s = append(s, "pages were evicted: the working set exceeds device memory (oversubscription); shrink it or process it in chunks")
	}
	return "Page-fault driven migrations move memory 4 KiB to 2 MiB at a time and stall the GPU or the host on each fault: " + strings.Join(s, "; ") + "."
}
