package syncapi

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the sync-api rule.
var Detector = &detectors.Detector{
	ID:       "sync-api",
	Title:    "Host blocked in synchronising calls",
	Layer:    model.LayerScheduling,
	Doc:      doc,
	Severity: model.SevWarning,
	Formats:  detectors.TimelineFormats,
	Params: []detectors.Param{
		{Name: "warmup_steps", Default: 1, Unit: "steps", Doc: "steps (ProfilerStep#N) skipped as warm-up when the trace has more steps than this"},
		{Name: "warmup_pct", Default: 10, Unit: "%", Doc: "share of the host span skipped as warm-up when the trace has too few steps"},
		{Name: "warn_pct", Default: 5, Unit: "%", Doc: "blocked share of the steady-state wall time at or above which the finding is a warning"},
		{Name: "info_pct", Default: 1, Unit: "%", Doc: "blocked share at or above which the finding is reported as info; below it the rule stays quiet"},
	},
	Run: run,
}

// syncKind classifies one blocking instance.
type syncKind uint8

const (
	kindDevice syncKind = iota
	kindStream
	kindEvent
	kindCopy
	kindOther
	kindHostOp // a framework op known to synchronise, seen without its API calls
	numKinds
)

var kindNames = [numKinds]string{"device", "stream", "event", "copy", "other", "host-op"}

var kindPlural = [numKinds]string{"device syncs", "stream syncs", "event syncs", "synchronous copies", "other syncs", "host-sync ops"}

var kindMetric = [numKinds]string{"device_syncs", "stream_syncs", "event_syncs", "sync_copies", "other_syncs", "host_sync_ops"}

// classify returns the kind of a synchronising API call, ok false when the
// call does not block the host.
func classify(name string, class model.APIClass) (syncKind, bool) {
	l := strings.ToLower(model.StripAPIVersion(name))
	switch class {
	case model.APISync:
		switch {
		case strings.Contains(l, "devicesynchronize") || strings.Contains(l, "ctxsynchronize"):
			return kindDevice, true
		case strings.Contains(l, "streamsynchronize"):
			return kindStream, true
		case strings.Contains(l, "eventsynchronize"):
			return kindEvent, true
		}
		return kindOther, true
	case model.APIMemcpy:
		if model.IsSyncMemcpyAPI(name) {
			return kindCopy, true
		}
	}
	return 0, false
}

// hostSyncOps are framework operators that copy a value to the host and so
// wait for the GPU (.item(), .cpu(), .tolist(), nonzero and friends).
var hostSyncOps = map[string]bool{
	"aten::item":                true,
	"aten::_local_scalar_dense": true,
	"aten::nonzero":             true,
	"aten::nonzero_static":      true,
	"aten::is_nonzero":          true,
	"aten::masked_select":       true,
	"aten::unique":              true,
	"aten::_unique2":            true,
	"aten::equal":               true,
	"aten::to":                  true,
	"aten::_to_copy":            true,
	"aten::copy_":               true,
	"aten::cpu":                 true,
	"aten::tolist":              true,
}

// nameOnlySyncOps always synchronise with the GPU when their input is on it;
// they are counted by name when the capture has no API calls.
var nameOnlySyncOps = map[string]bool{
	"aten::item":                true,
	"aten::_local_scalar_dense": true,
	"aten::nonzero":             true,
	"aten::is_nonzero":          true,
}

// implOps are implementation layers; call sites climb past them to the op
// the user called (aten::copy_ → aten::_to_copy → aten::to).
var implOps = map[string]bool{
	"aten::_local_scalar_dense": true,
	"aten::copy_":               true,
	"aten::_to_copy":            true,
}

type instance struct {
	start, end model.Time
	thread     model.ThreadID
	api        model.StringID // NoString for host ops
	site       int32          // index into t.Ranges, -1 none
	kind       syncKind
	device     model.DeviceID
	stream     model.StreamID
	key        detectors.CorrKey
}

func run(p *detectors.Pass) error {
	for _, t := range p.Set.Traces {
		analyze(p, t)
	}
	return nil
}

func analyze(p *detectors.Pass, t *model.Trace) {
	name := t.Path
	if len(t.APICalls) == 0 && !hasCPUOps(t) {
		p.NotMeasurable("%s: no CUDA/HIP API calls or CPU operators in the capture; re-capture with nsys --trace=cuda or torch.profiler with ProfilerActivity.CPU and CUDA", name)
		return
	}
	span, ok := detectors.HostSpan(t)
	if !ok {
		p.NotMeasurable("%s: the capture has no host activity with a duration", name)
		return
	}
	steady, how := detectors.Steady(t, span, int(p.Param("warmup_steps")), p.Param("warmup_pct"))
	wall := steady.Len()
	if wall <= 0 {
		p.NotMeasurable("%s: the steady-state window (%s) is empty", name, how)
		return
	}
	inferred := len(t.APICalls) == 0
	bi := detectors.NewBlockIdle(t)
	insts := collect(t, steady, inferred)
	kept := insts[:0]
	for _, in := range insts {
		if !bi.Teardown(in.start) {
			kept = append(kept, in)
		}
	}
	insts = kept
	if len(insts) == 0 {
		return
	}

	byThread, blocked, blockedWall := blockedTime(insts)
	share := detectors.Pct(float64(blockedWall), float64(wall))
	var sev model.Severity
	switch {
	case share >= p.Param("warn_pct"):
		sev = model.SevWarning
	case share >= p.Param("info_pct"):
		sev = model.SevInfo
	default:
		return
	}
	gpuIdle := bi.Total(byThread)
	sev, idleText := bi.Cap(sev, gpuIdle, blockedWall, wall, p.Param("warn_pct"))

	sum := summarize(t, insts)
	blockText := fmt.Sprintf("block the host for %s", blockedWall)
	if blocked != blockedWall {
		blockText = fmt.Sprintf("block host threads for %s of thread time, %s of wall time with a thread blocked", blocked, blockedWall)
	}
	msg := fmt.Sprintf("%d synchronising call(s) in the steady state (%s) %s, %s%% of %s wall time (%s); top call sites: %s.",
		len(insts), how, blockText, detectors.FormatFloat(share), wall, strings.Join(sum.kindsText(), ", "), strings.Join(sum.siteText(), ", "))
	if inferred {
		msg += " The capture has no API calls: blocking time is the duration of operators known to synchronise."
	}
	msg += idleText

	f := model.Finding{
		Severity: sev,
		Title: fmt.Sprintf("Host blocked %s in %d synchronising calls (%s%% of steady-state wall time)",
			blockedWall, len(insts), detectors.FormatFloat(share)),
		Message:        msg,
		Recommendation: recommendation(sum.counts, detectors.DetectProducer(t)),
		Confidence:     model.Measured,
		Metrics: []model.Metric{
			{Name: "sync_calls", Value: float64(len(insts)), Unit: "count"},
			{Name: "blocked_time", Value: float64(blocked), Unit: "ns"},
			{Name: "blocked_wall_time", Value: float64(blockedWall), Unit: "ns"},
			{Name: "blocked_share", Value: share, Unit: "%", Num: float64(blockedWall), Den: float64(wall)},
			{Name: "steady_wall_time", Value: float64(wall), Unit: "ns"},
		},
	}
	if bi.Measurable() {
		f.Metrics = append(f.Metrics, model.Metric{Name: "gpu_idle_ns", Value: float64(gpuIdle), Unit: "ns"},
			model.Metric{Name: "gpu_idle_share", Value: detectors.Pct(float64(gpuIdle), float64(wall)), Unit: "%", Num: float64(gpuIdle), Den: float64(wall)})
	}
	if inferred {
		f.Confidence = model.Inferred
	}
	f.Metrics = append(f.Metrics, sum.metrics(blocked)...)
	f.Evidence = evidence(t, insts, bi)
	p.Report(f)
}

// hasCPUOps says whether t has CPU operators on a thread.
func hasCPUOps(t *model.Trace) bool {
	for i := range t.Ranges {
		if t.Ranges[i].Kind == model.RangeCPUOp && t.Ranges[i].Thread != model.NoThread {
			return true
		}
	}
	return false
}

// blockedTime is, per thread, the union of the blocking intervals; blocked
// sums them over threads (thread time), blockedWall is the union over all
// threads, so that its share of the wall time never exceeds 100%.
func blockedTime(insts []instance) (byThread map[model.ThreadID][]model.Interval, blocked, blockedWall model.Duration) {
	byThread = map[model.ThreadID][]model.Interval{}
	all := make([]model.Interval, 0, len(insts))
	for i := range insts {
		in := &insts[i]
		iv := model.Interval{Start: in.start, End: in.end}
		byThread[in.thread] = append(byThread[in.thread], iv)
		all = append(all, iv)
	}
	for _, ivs := range byThread {
		blocked += detectors.Total(detectors.Union(ivs))
	}
	return byThread, blocked, detectors.Total(detectors.Union(all))
}

// syncSummary counts the calls by kind, the calls inside host-sync ops
// (aten::item, .cpu()) and the top call sites.
type syncSummary struct {
	counts [numKinds]int
	sites  []site
	inOps  int
}

func summarize(t *model.Trace, insts []instance) syncSummary {
	var s syncSummary
	for i := range insts {
		s.counts[insts[i].kind]++
	}
	s.sites = topSites(t, insts)
	for i := range insts {
		if in := &insts[i]; in.kind != kindHostOp && in.site >= 0 && t.Ranges[in.site].Kind == model.RangeCPUOp &&
			hostSyncOps[t.Str(t.Ranges[in.site].Name)] {
			s.inOps++
		}
	}
	return s
}

// kindsText is "N kind" per kind present, then the host-sync op count.
func (s *syncSummary) kindsText() []string {
	var kinds []string
	for k := syncKind(0); k < numKinds; k++ {
		if s.counts[k] > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", s.counts[k], kindPlural[k]))
		}
	}
	if s.inOps > 0 {
		kinds = append(kinds, fmt.Sprintf("%d inside host-sync ops such as aten::item / .cpu()", s.inOps))
	}
	return kinds
}

// siteText is "name blocked (count)" for the top maxSites sites.
func (s *syncSummary) siteText() []string {
	var siteText []string
	for i, st := range s.sites {
		if i == maxSites {
			break
		}
		siteText = append(siteText, fmt.Sprintf("%s %s (%d)", st.name, st.blocked, st.count))
	}
	return siteText
}

// metrics are the host-sync op count, the count per kind and the blocked
// time of the top sites as a share of blocked.
func (s *syncSummary) metrics(blocked model.Duration) []model.Metric {
	var ms []model.Metric
	if s.inOps > 0 {
		ms = append(ms, model.Metric{Name: "in_host_sync_ops", Value: float64(s.inOps), Unit: "count"})
	}
	for k := syncKind(0); k < numKinds; k++ {
		if s.counts[k] > 0 {
			ms = append(ms, model.Metric{Name: kindMetric[k], Value: float64(s.counts[k]), Unit: "count"})
		}
	}
	for i, st := range s.sites {
		if i == maxSites {
			break
		}
		ms = append(ms, model.Metric{Name: "site_blocked_time:" + st.name, Value: float64(st.blocked), Unit: "ns",
			Num: float64(st.blocked), Den: float64(blocked)})
	}
	return ms
}

const maxSites = 5

// collect finds the blocking instances that start in the steady window.
func collect(t *model.Trace, steady model.Interval, inferred bool) []instance {
	parents := Parents(t, model.RangeCPUOp, model.RangeNVTX, model.RangeUser)
	climb := func(ri int) int {
		for ri >= 0 && t.Ranges[ri].Kind == model.RangeCPUOp && implOps[t.Str(t.Ranges[ri].Name)] && parents[ri] >= 0 {
			ri = int(parents[ri])
		}
		return ri
	}
	var out []instance
	if inferred {
		for i := range t.Ranges {
			r := &t.Ranges[i]
			if r.Kind != model.RangeCPUOp || r.Thread == model.NoThread || r.Start < steady.Start || r.Start >= steady.End {
				continue
			}
			if !nameOnlySyncOps[t.Str(r.Name)] {
				continue
			}
			// Count only the outermost of nested matching ops (aten::item
			// around aten::_local_scalar_dense).
			if pi := parents[i]; pi >= 0 && nameOnlySyncOps[t.Str(t.Ranges[pi].Name)] {
				continue
			}
			site := climb(int(parents[i]))
			if site < 0 || !hostSyncOps[t.Str(t.Ranges[site].Name)] {
				site = i
			}
			out = append(out, instance{start: r.Start, end: min(r.End, steady.End), thread: r.Thread, site: int32(site), kind: kindHostOp,
				device: model.NoDevice, stream: model.NoStream})
		}
		return out
	}

	type cls struct {
		k  syncKind
		ok bool
	}
	cache := map[[2]uint32]cls{}
	enc := detectors.NewEncloser(t, model.RangeCPUOp, model.RangeNVTX, model.RangeUser)
	lastEnd := map[model.ThreadID]model.Time{}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if t.CallClass(c) != model.APISync && t.CallClass(c) != model.APIMemcpy {
			continue
		}
		key := [2]uint32{uint32(t.CallName(c)), uint32(t.CallClass(c))}
		cl, seen := cache[key]
		if !seen {
			k, ok := classify(t.Str(t.CallName(c)), t.CallClass(c))
			cl = cls{k, ok}
			cache[key] = cl
		}
		if !cl.ok || c.Start < steady.Start || c.Start >= steady.End {
			continue
		}
		// Only the outermost call counts: a driver call inside the runtime
		// call that made it (cuMemcpyHtoD inside cudaMemcpy) is the same wait.
		if e, ok := lastEnd[c.Thread]; ok && c.End <= e {
			continue
		}
		lastEnd[c.Thread] = c.End
		site := climb(enc.Find(c.Thread, c.Start, c.End))
		out = append(out, instance{start: c.Start, end: min(c.End, steady.End), thread: c.Thread, api: t.CallName(c), site: int32(site), kind: cl.k,
			device: model.NoDevice, stream: model.NoStream, key: detectors.CorrKey{Scope: t.CallScope(c), Corr: c.Correlation}})
	}
	placeOnGPU(t, out)
	return out
}

// placeOnGPU fills device and stream from the GPU-side sync record or the
// copy that a blocking call is correlated with.
func placeOnGPU(t *model.Trace, insts []instance) {
	type place struct {
		dev    model.DeviceID
		stream model.StreamID
	}
	want := map[detectors.CorrKey]place{}
	for i := range insts {
		if insts[i].key.Corr != 0 {
			want[insts[i].key] = place{model.NoDevice, model.NoStream}
		}
	}
	if len(want) == 0 {
		return
	}
	for i := range t.Syncs {
		s := &t.Syncs[i]
		k := detectors.CorrKey{Scope: s.CorrScope, Corr: s.Correlation}
		if _, ok := want[k]; ok {
			want[k] = place{s.Device, s.Stream}
		}
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		k := detectors.CorrKey{Scope: m.CorrScope, Corr: m.Correlation}
		if _, ok := want[k]; ok {
			want[k] = place{m.Device, m.Stream}
		}
	}
	for i := range insts {
		if insts[i].key.Corr != 0 {
			pl := want[insts[i].key]
			insts[i].device, insts[i].stream = pl.dev, pl.stream
		}
	}
}

type site struct {
	name    string
	count   int
	blocked model.Duration
}

// topSites aggregates blocking time by call site, largest first.
func topSites(t *model.Trace, insts []instance) []site {
	m := map[string]*site{}
	for i := range insts {
		in := &insts[i]
		n := "(no enclosing range)"
		if in.site >= 0 {
			n = t.Str(t.Ranges[in.site].Name)
		}
		s := m[n]
		if s == nil {
			s = &site{name: n}
			m[n] = s
		}
		s.count++
		s.blocked += model.Interval{Start: in.start, End: in.end}.Len()
	}
	out := make([]site, 0, len(m))
	for _, s := range m {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.blocked != b.blocked {
			return a.blocked > b.blocked
		}
		if a.count != b.count {
			return a.count > b.count
		}
		return a.name < b.name
	})
	return out
}

// evidence returns the longest blocking instances (up to 5), longest first.
func evidence(t *model.Trace, insts []instance, bi *detectors.BlockIdle) []model.Evidence {
	idx := make([]int, len(insts))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool {
		a, b := &insts[idx[i]], &insts[idx[j]]
		da, db := a.end-a.start, b.end-b.start
		if da != db {
			return da > db
		}
		return a.start < b.start
	})
	var ev []model.Evidence
	for _, i := range idx {
		if len(ev) == 5 {
			break
		}
		in := &insts[i]
		what := t.Str(in.api)
		if in.api == model.NoString && in.site >= 0 {
			what = t.Str(t.Ranges[in.site].Name)
		}
		note := fmt.Sprintf("%s (%s) blocks %s", what, kindNames[in.kind], model.Interval{Start: in.start, End: in.end}.Len())
		if in.site >= 0 && in.api != model.NoString {
			note += " in " + t.Str(t.Ranges[in.site].Name)
		}
		e := model.Evidence{Rank: t.Rank, Device: in.device, Stream: in.stream, Thread: detectors.TID(t, in.thread),
			Start: in.start, End: in.end, Note: note}
		if bi.Measurable() {
			e.GPUIdle, e.GPUIdleKnown = bi.Idle(in.thread, in.start, in.end), true
			e.Note += fmt.Sprintf("; GPU idle with nothing queued %s", e.GPUIdle)
		}
		ev = append(ev, e)
	}
	return ev
}

// recommendation is the advice for the kinds of blocking seen; PyTorch
// idioms only when PyTorch produced the trace.
func recommendation(counts [numKinds]int, prod detectors.ProducerInfo) string {
	if prod.Producer != detectors.ProducerPyTorch {
		s := detectors.SyncAdvice(prod)
		if counts[kindCopy] > 0 {
			s += " " + detectors.CopyAdvice(prod)
		}
		return s
	}
	var parts []string
	if counts[kindDevice] > 0 {
		parts = append(parts, "drop torch.cuda.synchronize()/cudaDeviceSynchronize from the step loop (keep it only around timing code)")
	}
	if counts[kindStream] > 0 || counts[kindHostOp] > 0 {
		parts = append(parts, "avoid .item(), .cpu(), .tolist(), nonzero and printing GPU tensors inside the loop; accumulate on the GPU and read once per N steps")
	}
	if counts[kindEvent] > 0 {
		parts = append(parts, "wait on events with cudaStreamWaitEvent (stream.wait_event) instead of blocking the host")
	}
	if counts[kindCopy] > 0 {
		parts = append(parts, "use cudaMemcpyAsync from pinned memory (tensor.pin_memory(), .to(device, non_blocking=True))")
	}
	if counts[kindOther] > 0 {
		parts = append(parts, "check the remaining synchronising calls for a non-blocking form")
	}
	parts = append(parts, "torch.cuda.set_sync_debug_mode(\"warn\") names the Python lines that synchronise")
	return strings.Join(parts, "; ") + "."
}
