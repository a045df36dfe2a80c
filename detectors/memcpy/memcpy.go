package memcpy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the memcpy rule.
var Detector = &detectors.Detector{
	ID:       "memcpy",
	Title:    "Inefficient memory copies",
	Layer:    model.LayerMemory,
	Doc:      doc,
	Severity: model.SevWarning,
	Formats:  detectors.TimelineFormats,
	Params: []detectors.Param{
		{Name: "warmup_steps", Default: 1, Unit: "steps", Doc: "steps (ProfilerStep#N) skipped as warm-up when the trace has more steps than this"},
		{Name: "warmup_pct", Default: 10, Unit: "%", Doc: "share of the span skipped as warm-up when the trace has too few steps"},
		{Name: "warn_pct", Default: 5, Unit: "%", Doc: "share of the steady-state wall time at or above which a copy problem is a warning"},
		{Name: "min_pct", Default: 0.5, Unit: "%", Doc: "share of the steady-state wall time below which synchronous and pageable copies are not reported"},
		{Name: "small_bytes", Default: 64 << 10, Unit: "bytes", Doc: "copies smaller than this count as tiny"},
		{Name: "small_min_count", Default: 100, Unit: "count", Doc: "tiny copies in the steady state at or above which they are reported"},
		{Name: "bw_min_bytes", Default: 1 << 20, Unit: "bytes", Doc: "host copies at least this large enter the bandwidth check (smaller ones are latency-bound)"},
		{Name: "bw_min_bytes_dtod", Default: 64 << 20, Unit: "bytes", Doc: "device-to-device copies at least this large enter the bandwidth check (device memory is fast enough that smaller copies are latency-bound)"},
		{Name: "bw_min_pct", Default: 50, Unit: "%", Doc: "achieved bandwidth below this share of what the link or memory should give is reported"},
		{Name: "pcie_gbps", Default: 0, Unit: "GB/s", Doc: "practical host link bandwidth per direction; 0 takes it from the GPU name table (PCIe Gen3 when unknown)"},
	},
	Run: run,
}

// copyRec is one copy that a check selected.
type copyRec struct {
	mem int32 // index into t.MemOps
	api int32 // index into t.APICalls, -1 none
}

// group accumulates the copies of one check, keeping only the worst few as
// evidence.
type group struct {
	n     int
	gpu   model.Duration // summed copy durations
	api   model.Duration // summed issuing-call durations
	cost  model.Duration // summed max(call, copy) per copy
	bytes int64
	names map[model.StringID]int // issuing API names
	worse less
	top   []copyRec // the worst copies, worst first
	// blocks are the issuing calls' windows per thread, to weigh the
	// host blocking by the GPU idle it costs.
	blocks map[model.ThreadID][]model.Interval
}

func newGroup(worse less) *group {
	return &group{worse: worse, names: map[model.StringID]int{}, blocks: map[model.ThreadID][]model.Interval{}}
}

const maxEvidence = 5

// add adds copy mi issued by call ai (-1 none); times are clipped to the
// window w, so that a call that began in warm-up counts only its steady part.
func (g *group) add(t *model.Trace, w model.Interval, mi, ai int32) {
	m := &t.MemOps[mi]
	d := ivLen(max(m.Start, w.Start), min(m.End, w.End))
	var a model.Duration
	g.n++
	g.gpu += d
	if ai >= 0 {
		c := &t.APICalls[ai]
		a = ivLen(max(c.Start, w.Start), min(c.End, w.End))
		g.api += a
		g.names[t.CallName(c)]++
		if a > 0 {
			g.blocks[c.Thread] = append(g.blocks[c.Thread], model.Interval{Start: max(c.Start, w.Start), End: min(c.End, w.End)})
		}
	}
	g.cost += max(a, d)
	if m.Bytes > 0 {
		g.bytes += m.Bytes
	}
	r := copyRec{mi, ai}
	if len(g.top) == maxEvidence && !g.worse(r, g.top[maxEvidence-1]) {
		return
	}
	i := sort.Search(len(g.top), func(i int) bool { return g.worse(r, g.top[i]) })
	if len(g.top) < maxEvidence {
		g.top = append(g.top, copyRec{})
	}
	copy(g.top[i+1:], g.top[i:len(g.top)-1])
	g.top[i] = r
}

// bwKey groups copies for the bandwidth check.
type bwKey struct {
	dev  model.DeviceID
	kind model.MemOpKind
}

func run(p *detectors.Pass) error {
	for _, t := range p.Set.Traces {
		analyze(p, t)
	}
	return nil
}

func analyze(p *detectors.Pass, t *model.Trace) {
	if len(t.Kernels) == 0 && len(t.MemOps) == 0 {
		p.NotMeasurable("%s: no GPU activity (kernels or memory copies) in the capture; re-capture with nsys --trace=cuda or torch.profiler with ProfilerActivity.CUDA", t.Path)
		return
	}
	span, ok := detectors.HostSpan(t)
	if !ok {
		p.NotMeasurable("%s: the capture has no activity with a duration", t.Path)
		return
	}
	prod := detectors.DetectProducer(t)
	checkUVM(p, t, span, prod)
	steady, how := detectors.Steady(t, span, int(p.Param("warmup_steps")), p.Param("warmup_pct"))
	wall := steady.Len()
	if wall <= 0 {
		p.NotMeasurable("%s: the steady-state window (%s) is empty", t.Path, how)
		return
	}
	c := classify(p, t, steady)
	if c.copies == 0 {
		return
	}
	if len(t.APICalls) == 0 {
		p.NotMeasurable("%s: synchronous copies: the capture has no API calls to tell cudaMemcpy from cudaMemcpyAsync (the other copy checks ran)", t.Path)
	}
	s := &scope{t: t, steady: steady, how: how, wall: wall, bi: detectors.NewBlockIdle(t), prod: prod,
		warn: p.Param("warn_pct"), minPct: p.Param("min_pct")}
	s.reportSync(p, c.sync)
	s.reportPageable(p, c.page)
	s.reportSmall(p, c)

	keys := make([]bwKey, 0, len(c.bw))
	for k := range c.bw {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].dev != keys[j].dev {
			return keys[i].dev < keys[j].dev
		}
		return keys[i].kind < keys[j].kind
	})
	for _, k := range keys {
		checkBandwidth(p, t, k, c.bw[k], how)
	}
}

// copyGroups are the steady-state copies (not sets or UVM migrations)
// sorted into the groups each check reports on.
type copyGroups struct {
	sync, page, small *group
	smallOther        *group // tiny copies that are also synchronous or pageable
	bw                map[bwKey]*group
	copies, smallAll  int
	smallBytesAll     int64
	smallBytes        int64 // the small_bytes threshold
}

// classify walks the copies starting in steady and files each into the
// synchronous, pageable, tiny and bandwidth groups it belongs to.
func classify(p *detectors.Pass, t *model.Trace, steady model.Interval) *copyGroups {
	apis := detectors.IndexAPI(t, func(c *model.APICall) bool {
		return t.CallClass(c) == model.APIMemcpy || t.CallClass(c) == model.APIMemset
	})
	syncName := map[model.StringID]bool{}
	isSync := func(id model.StringID) bool {
		v, ok := syncName[id]
		if !ok {
			v = model.IsSyncMemcpyAPI(t.Str(id))
			syncName[id] = v
		}
		return v
	}
	bwMin := int64(p.Param("bw_min_bytes"))
	bwMinD := int64(p.Param("bw_min_bytes_dtod"))
	c := &copyGroups{
		sync: newGroup(byCallTime(t)), page: newGroup(byCost(t)), small: newGroup(byCost(t)),
		smallOther: newGroup(byCost(t)), bw: map[bwKey]*group{},
		smallBytes: int64(p.Param("small_bytes")),
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		if m.Start < steady.Start || m.Start >= steady.End {
			continue
		}
		switch m.Kind {
		case model.MemSet, model.MemUVM:
			continue
		}
		c.copies++
		ai := apis.Lookup(detectors.CorrKey{Scope: m.CorrScope, Corr: m.Correlation})
		sync := ai >= 0 && isSync(t.CallName(&t.APICalls[ai])) && m.Kind != model.MemDtoD &&
			!(m.Kind == model.MemHtoD && m.Bytes >= 0 && m.Bytes <= 64<<10)
		pageable := m.Src == model.MemPageable || m.Dst == model.MemPageable
		switch {
		case sync:
			c.sync.add(t, steady, int32(i), ai)
		case pageable:
			c.page.add(t, steady, int32(i), ai)
		}
		if m.Bytes >= 0 && m.Bytes < c.smallBytes {
			// Tiny copies that are also synchronous or pageable wait for
			// the GPU or the staging buffer: their cost is reported there,
			// not as per-copy overhead.
			c.smallAll++
			c.smallBytesAll += m.Bytes
			if sync || pageable {
				c.smallOther.add(t, steady, int32(i), ai)
			} else {
				c.small.add(t, steady, int32(i), ai)
			}
		}
		minBytes := bwMin
		if m.Kind == model.MemDtoD {
			minBytes = bwMinD
		}
		if m.Bytes >= minBytes && m.End > m.Start && bandwidthChecked(m) {
			k := bwKey{m.Device, m.Kind}
			g := c.bw[k]
			if g == nil {
				g = newGroup(bySlowest(t))
				c.bw[k] = g
			}
			g.add(t, steady, int32(i), ai)
		}
	}
	return c
}

// scope is what every copy finding is measured against: the steady-state
// window, its wall time, GPU idle per block and the severity thresholds.
type scope struct {
	t            *model.Trace
	steady       model.Interval
	how          string
	wall         model.Duration
	bi           *detectors.BlockIdle
	prod         detectors.ProducerInfo
	warn, minPct float64
}

// sevOf is the severity of a share of wall time, or false under min_pct.
func (s *scope) sevOf(share float64) (model.Severity, bool) {
	switch {
	case share >= s.warn:
		return model.SevWarning, true
	case share >= s.minPct:
		return model.SevInfo, true
	}
	return 0, false
}

// reportSync reports synchronous copies by the host time they block.
func (s *scope) reportSync(p *detectors.Pass, syncG *group) {
	t, bi, wall, how := s.t, s.bi, s.wall, s.how
	n := syncG.n
	if n == 0 {
		return
	}
	blocked := syncG.api
	share := detectors.Pct(float64(blocked), float64(wall))
	sev, ok := s.sevOf(share)
	if !ok {
		return
	}
	idle := bi.Total(syncG.blocks) + syncG.gpu
	sev, idleText := bi.Cap(sev, idle, blocked, wall, s.warn)
	p.Report(model.Finding{
		Severity: sev,
		Title:    fmt.Sprintf("%d synchronous copies block the host %s (%s%% of wall time)", n, blocked, detectors.FormatFloat(share)),
		Message: fmt.Sprintf("%d synchronous copies (%s) in the steady state (%s) block the host for %s, %s%% of %s wall time, moving %s.",
			n, apiNames(t, syncG.names), how, blocked, detectors.FormatFloat(share), wall, bytesText(syncG.bytes)) + idleText,
		Recommendation: detectors.CopyAdvice(s.prod),
		Metrics: []model.Metric{
			gpuIdleMetric(bi, idle),
			{Name: "sync_copies", Value: float64(n), Unit: "count"},
			{Name: "blocked_time", Value: float64(blocked), Unit: "ns"},
			{Name: "blocked_share", Value: share, Unit: "%", Num: float64(blocked), Den: float64(wall)},
			{Name: "copy_time", Value: float64(syncG.gpu), Unit: "ns"},
			{Name: "bytes", Value: float64(syncG.bytes), Unit: "bytes"},
		},
		Evidence: evidence(t, syncG.top, "synchronous", bi),
	})
}

// reportPageable reports copies staged through pageable host memory by
// their cost.
func (s *scope) reportPageable(p *detectors.Pass, pageG *group) {
	t, bi, wall, how := s.t, s.bi, s.wall, s.how
	n := pageG.n
	if n == 0 {
		return
	}
	share := detectors.Pct(float64(pageG.cost), float64(wall))
	sev, ok := s.sevOf(share)
	if !ok {
		return
	}
	idle := bi.Total(pageG.blocks) + pageG.gpu
	sev, idleText := bi.Cap(sev, idle, pageG.api, wall, s.warn)
	p.Report(model.Finding{
		Severity: sev,
		Title:    fmt.Sprintf("%d copies touch pageable host memory (%s%% of wall time)", n, detectors.FormatFloat(share)),
		Message: fmt.Sprintf("%d copies touch pageable host memory in the steady state (%s): %s of copy time%s, %s%% of %s wall time, moving %s; the driver stages them through a pinned buffer, so an Async call waits for the copy and runs at a fraction of the link bandwidth.",
			n, how, pageG.gpu, callText(pageG), detectors.FormatFloat(share), wall, bytesText(pageG.bytes)) + idleText,
		Recommendation: detectors.CopyAdvice(s.prod),
		Metrics: []model.Metric{
			gpuIdleMetric(bi, idle),
			{Name: "pageable_copies", Value: float64(n), Unit: "count"},
			{Name: "copy_time", Value: float64(pageG.gpu), Unit: "ns"},
			{Name: "call_time", Value: float64(pageG.api), Unit: "ns"},
			{Name: "pageable_share", Value: share, Unit: "%", Num: float64(pageG.cost), Den: float64(wall)},
			{Name: "bytes", Value: float64(pageG.bytes), Unit: "bytes"},
		},
		Evidence: evidence(t, pageG.top, "pageable", bi),
	})
}

// reportSmall reports tiny copies by count, costing only those not
// already reported as synchronous or pageable.
func (s *scope) reportSmall(p *detectors.Pass, c *copyGroups) {
	t, wall, how := s.t, s.wall, s.how
	smallG, smallOtherG := c.small, c.smallOther
	n := c.smallAll
	if !(n > 0 && float64(n) >= p.Param("small_min_count")) {
		return
	}
	share := detectors.Pct(float64(smallG.cost), float64(wall))
	sev := model.SevInfo
	if share >= s.warn {
		sev = model.SevWarning
	}
	perStep := ""
	if steps := stepsIn(t, s.steady); steps > 0 {
		perStep = fmt.Sprintf(" (%s per step)", detectors.FormatFloat(float64(n)/float64(steps)))
	}
	msg := fmt.Sprintf("%d copies under %s in the steady state (%s)%s move %s in total, mean %s each",
		n, bytesText(c.smallBytes), how, perStep, bytesText(c.smallBytesAll), bytesText(c.smallBytesAll/int64(n)))
	switch {
	case smallOtherG.n == 0:
		msg += fmt.Sprintf("; they cost %s (%s of copy time%s), %s%% of %s wall time, almost all of it fixed per-copy overhead.",
			smallG.cost, smallG.gpu, callText(smallG), detectors.FormatFloat(share), wall)
	case smallG.n == 0:
		msg += "; all of them are synchronous or pageable and reported as such."
	default:
		msg += fmt.Sprintf("; %d of them are synchronous or pageable and reported as such, the other %d cost %s (%s of copy time%s), %s%% of %s wall time, almost all of it fixed per-copy overhead.",
			smallOtherG.n, smallG.n, smallG.cost, smallG.gpu, callText(smallG), detectors.FormatFloat(share), wall)
	}
	ev := smallG.top
	if len(ev) == 0 {
		ev = smallOtherG.top
	}
	p.Report(model.Finding{
		Severity:       sev,
		Title:          fmt.Sprintf("%d tiny memory copies", n),
		Message:        msg,
		Recommendation: tinyAdvice(s.prod),
		Metrics: []model.Metric{
			{Name: "small_copies", Value: float64(n), Unit: "count"},
			{Name: "small_copies_sync_or_pageable", Value: float64(smallOtherG.n), Unit: "count"},
			{Name: "copy_time", Value: float64(smallG.gpu), Unit: "ns"},
			{Name: "call_time", Value: float64(smallG.api), Unit: "ns"},
			{Name: "small_share", Value: share, Unit: "%", Num: float64(smallG.cost), Den: float64(wall)},
			{Name: "bytes", Value: float64(c.smallBytesAll), Unit: "bytes"},
		},
		Evidence: evidence(t, ev, "tiny", nil),
	})
}

// bandwidthChecked reports whether a copy's bandwidth has a known ceiling:
// host copies from or to pinned memory, and device-to-device copies.
func bandwidthChecked(m *model.MemOp) bool {
	switch m.Kind {
	case model.MemHtoD:
		return m.Src == model.MemPinned
	case model.MemDtoH:
		return m.Dst == model.MemPinned
	case model.MemDtoD:
		return true
	}
	return false
}

func checkBandwidth(p *detectors.Pass, t *model.Trace, k bwKey, g *group, how string) {
	hostGBs, memGBs, known := expected(t, k.dev)
	if v := p.Param("pcie_gbps"); v > 0 {
		hostGBs = v
	}
	var want float64
	var basis string
	switch k.kind {
	case model.MemDtoD:
		if memGBs <= 0 {
			return
		}
		// A device copy reads and writes every byte: half the memory bandwidth.
		want = memGBs / 2
		basis = fmt.Sprintf("half of the %s GB/s device memory bandwidth", detectors.FormatFloat(memGBs))
	default:
		want = hostGBs
		switch {
		case p.Param("pcie_gbps") > 0:
			basis = "the configured host link bandwidth"
		case known:
			basis = "the practical host link bandwidth of this GPU"
		default:
			basis = "a PCIe Gen3 x16 link (GPU model unknown)"
		}
	}
	minBytes := int64(p.Param("bw_min_bytes"))
	if k.kind == model.MemDtoD {
		minBytes = int64(p.Param("bw_min_bytes_dtod"))
	}
	if g.gpu <= 0 {
		return
	}
	got := float64(g.bytes) / float64(g.gpu) // bytes per ns = GB/s
	pct := detectors.Pct(got, want)
	if pct >= p.Param("bw_min_pct") {
		return
	}
	p.Report(model.Finding{
		Severity: model.SevInfo,
		Title: fmt.Sprintf("%s copies on device %d reach %s GB/s, %s%% of the ~%s GB/s expected",
			k.kind, k.dev, detectors.FormatFloat(got), detectors.FormatFloat(pct), detectors.FormatFloat(want)),
		Confidence: model.Estimated,
		Message: fmt.Sprintf("%d %s copies of at least %s on device %d reach %s GB/s in the steady state (%s), %s%% of the ~%s GB/s expected from %s.",
			g.n, k.kind, bytesText(minBytes), k.dev, detectors.FormatFloat(got), how, detectors.FormatFloat(pct),
			detectors.FormatFloat(want), basis),
		Recommendation: "Check the link the GPU sits on (nvidia-smi -q: PCIe generation and width, NUMA affinity of the host buffer), copies that overlap other traffic on the same link, and copy engines shared with peer or collective traffic; for device copies, prefer fewer, larger and aligned copies.",
		Metrics: []model.Metric{
			{Name: "achieved_bandwidth", Value: got, Unit: "GB/s", Num: float64(g.bytes), Den: float64(g.gpu)},
			{Name: "expected_bandwidth", Value: want, Unit: "GB/s"},
			{Name: "bandwidth_ratio", Value: pct, Unit: "%", Num: got, Den: want},
			{Name: "copies", Value: float64(g.n), Unit: "count"},
		},
		Evidence: evidence(t, g.top, "slow", nil),
	})
}

// stepsIn counts the outermost steps that start in w.
func stepsIn(t *model.Trace, w model.Interval) int {
	n := 0
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind == model.RangeStep && r.Thread != model.NoThread && r.Depth == 0 && r.Start >= w.Start && r.Start < w.End {
			n++
		}
	}
	return n
}

// apiNames lists the distinct issuing API names, most common first.
func apiNames(t *model.Trace, names map[model.StringID]int) string {
	count := map[string]int{}
	for id, n := range names {
		count[model.StripAPIVersion(t.Str(id))] += n
	}
	out := make([]string, 0, len(count))
	for n := range count {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if count[out[i]] != count[out[j]] {
			return count[out[i]] > count[out[j]]
		}
		return out[i] < out[j]
	})
	return strings.Join(out, ", ")
}

// Orderings of copies for evidence, worst first.
type less func(a, b copyRec) bool

func byCallTime(t *model.Trace) less {
	return func(a, b copyRec) bool { return callLen(t, a) > callLen(t, b) }
}

func byCost(t *model.Trace) less {
	return func(a, b copyRec) bool {
		return max(callLen(t, a), memLen(t, a)) > max(callLen(t, b), memLen(t, b))
	}
}

func bySlowest(t *model.Trace) less {
	bwOf := func(r copyRec) float64 {
		m := &t.MemOps[r.mem]
		return float64(m.Bytes) / float64(ivLen(m.Start, m.End))
	}
	return func(a, b copyRec) bool { return bwOf(a) < bwOf(b) }
}

func callLen(t *model.Trace, r copyRec) model.Duration {
	if r.api < 0 {
		return 0
	}
	c := &t.APICalls[r.api]
	return model.Interval{Start: c.Start, End: c.End}.Len()
}

// evidence describes the worst copies of a group.
// With bi, each item carries the GPU idle (empty queue) during its call.
func evidence(t *model.Trace, top []copyRec, what string, bi *detectors.BlockIdle) []model.Evidence {
	ev := make([]model.Evidence, 0, len(top))
	for _, r := range top {
		m := &t.MemOps[r.mem]
		tid := int64(-1)
		note := fmt.Sprintf("%s %s copy of %s (%s -> %s) takes %s", what, m.Kind, bytesText(m.Bytes), m.Src, m.Dst, ivLen(m.Start, m.End))
		if r.api >= 0 {
			c := &t.APICalls[r.api]
			tid = detectors.TID(t, c.Thread)
			note += fmt.Sprintf("; %s takes %s", model.StripAPIVersion(t.Str(t.CallName(c))), callLen(t, r))
		}
		e := model.Evidence{Rank: t.Rank, Device: m.Device, Stream: m.Stream, Thread: tid, Start: m.Start, End: m.End, Note: note}
		if bi != nil && bi.Measurable() && r.api >= 0 {
			c := &t.APICalls[r.api]
			e.GPUIdle, e.GPUIdleKnown = bi.Idle(c.Thread, c.Start, c.End)+ivLen(m.Start, m.End), true
			e.Note += fmt.Sprintf("; GPU idle with nothing queued %s", e.GPUIdle)
		}
		ev = append(ev, e)
	}
	return ev
}

// gpuIdleMetric is the finding's gpu_idle_ns (-1 when the capture cannot
// tell an empty queue). For copies it is the time the device ran no other
// work and had none queued during the issuing calls, plus the copies' own
// time: the compute engines wait for the copy.
func gpuIdleMetric(bi *detectors.BlockIdle, idle model.Duration) model.Metric {
	if !bi.Measurable() {
		idle = -1
	}
	return model.Metric{Name: "gpu_idle_ns", Value: float64(idle), Unit: "ns"}
}

// bytesText formats a byte count with a binary unit.
func bytesText(b int64) string {
	switch {
	case b < 0:
		return "unknown bytes"
	case b < 1<<10:
		return fmt.Sprintf("%d B", b)
	case b < 1<<20:
		return detectors.FormatFloat(float64(b)/(1<<10)) + " KiB"
	case b < 1<<30:
		return detectors.FormatFloat(float64(b)/(1<<20)) + " MiB"
	default:
		return detectors.FormatFloat(float64(b)/(1<<30)) + " GiB"
	}
}

func ivLen(s, e model.Time) model.Duration { return model.Interval{Start: s, End: e}.Len() }

func memLen(t *model.Trace, r copyRec) model.Duration {
	m := &t.MemOps[r.mem]
	return ivLen(m.Start, m.End)
}

// callText describes the time in the issuing calls, if any were linked.
func callText(g *group) string {
	if len(g.names) == 0 {
		return ""
	}
	return fmt.Sprintf(" and %s in the issuing calls", g.api)
}

// tinyAdvice is the advice for many tiny copies, worded for the producer.
func tinyAdvice(prod detectors.ProducerInfo) string {
	if prod.Producer == detectors.ProducerPyTorch {
		return "Batch small tensors into one buffer and copy it once (torch.cat / a flat pinned staging buffer), keep scalars and indices on the GPU instead of copying them every step, or capture the loop in a CUDA Graph."
	}
	return "Pack small buffers into one pinned staging buffer and copy it once, keep scalars and indices on the device instead of copying them every iteration, or capture the loop in a CUDA Graph."
}
