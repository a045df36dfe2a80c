package gilstall

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the gil-stall rule.
var Detector = &detectors.Detector{
	ID:       "gil-stall",
	Title:    "Python threads stalled on the GIL while the GPU starves",
	Layer:    model.LayerScheduling,
	Doc:      doc,
	Severity: model.SevWarning,
	Formats:  detectors.TimelineFormats,
	Params: []detectors.Param{
		{Name: "warn_pct", Default: 5, Unit: "%", Doc: "GPU idle time overlapped by GIL stalls, as a share of the process's GPU span, at or above which the finding is a warning"},
		{Name: "info_pct", Default: 1, Unit: "%", Doc: "overlapped share at or above which the finding is info; below it the rule stays quiet"},
		{Name: "switch_interval_us", Default: 5000, Unit: "µs", Doc: "the interpreter's GIL switch interval (sys.getswitchinterval(), 5 ms by default): the timeout of each GIL wait"},
		{Name: "switch_tol_pct", Default: 20, Unit: "%", Doc: "how far an OS wait may be from the switch interval and still count as a GIL wait timing out"},
		{Name: "osrt_min_timeouts", Default: 2, Unit: "count", Doc: "switch-interval waits in a row needed to call an OS-runtime wait episode a GIL stall when no call chain shows take_gil"},
		{Name: "osrt_max_gap_us", Default: 200, Unit: "µs", Doc: "largest gap between two waits of one episode"},
		{Name: "python_min_gap_us", Default: 500, Unit: "µs", Doc: "shortest silence of the launching thread that counts as a stall (Python-stack source)"},
		{Name: "python_overlap_max_pct", Default: 5, Unit: "%", Doc: "Python activity of the launching thread overlapping other threads' beyond this share means the threads are not serialised (Python-stack source)"},
	},
	Run: run,
}

// Sources, strongest first.
const (
	srcGIL    = "GIL trace"
	srcOSRT   = "OS runtime waits"
	srcPython = "Python stacks"
)

const notMeasurableReason = "no GIL, OS-runtime or Python-stack data in the capture; re-capture with nsys --trace=cuda,osrt,python-gil (or --python-backtrace=cuda) or torch.profiler with with_stack=True"

// stall is one interval in which a thread waited for the GIL.
type stall struct {
	thread model.ThreadID
	iv     model.Interval
	note   string
}

func run(p *detectors.Pass) error {
	for _, t := range p.Set.Traces {
		analyze(p, t)
	}
	return nil
}

func analyze(p *detectors.Pass, t *model.Trace) {
	var (
		src     string
		conf    model.Confidence
		stalls  []stall
		holders map[model.ThreadID]model.Duration
		reason  string
	)
	py := pythonThreads(t)
	switch {
	case len(t.GIL) > 0:
		src, conf = srcGIL, model.Measured
	case hasOSOnPython(t, py):
		src, conf = srcOSRT, model.Inferred
	case len(pythonProcesses(t)) > 0:
		src, conf = srcPython, model.Inferred
	default:
		why := notMeasurableReason
		if t.Caps.Has(model.CapPython) {
			why = "Python stacks cover at most one thread per process, so contention between threads cannot be seen, and there is no GIL or OS-runtime data; re-capture with nsys --trace=cuda,osrt,python-gil (or --python-backtrace=cuda)"
		}
		if len(t.OSCalls) > 0 {
			why = "OS runtime calls are present but none on a thread recognisable as Python (by process or thread name, Python frames or call chains); " + why
		}
		p.NotMeasurable("%s: %s", t.Path, why)
		return
	}
	gpus := newGPUs(t)
	gpus.starve(detectors.NewBlockIdle(t))
	if gpus.Empty() {
		p.NotMeasurable("%s: no GPU activity (kernels or copies) in the capture, so GPU starvation cannot be measured", t.Path)
		return
	}
	switch src {
	case srcGIL:
		stalls = fromGIL(t)
		holders = gilHolders(t, stalls)
	case srcOSRT:
		stalls = fromOSRT(p, t, py)
	default:
		stalls, holders, reason = fromPython(p, t)
	}
	if len(stalls) == 0 && reason != "" {
		p.NotMeasurable("%s: Python stacks cannot show GIL stalls here: %s", t.Path, reason)
		return
	}

	// Group stalls by process.
	byPID := map[int64][]stall{}
	if single(t, stalls) {
		byPID[t.Thread(stalls[0].thread).PID] = stalls // the common case: no copy
	} else {
		for _, s := range stalls {
			pid := t.Thread(s.thread).PID
			byPID[pid] = append(byPID[pid], s)
		}
	}
	pids := make([]int64, 0, len(byPID))
	for pid := range byPID {
		pids = append(pids, pid)
	}
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	for _, pid := range pids {
		report(p, t, gpus.For(pid), pid, byPID[pid], src, conf, holders)
	}
}

func report(p *detectors.Pass, t *model.Trace, v *gpuView, pid int64, stalls []stall, src string, conf model.Confidence, holders map[model.ThreadID]model.Duration) {
	if v == nil || v.Span.Len() <= 0 {
		return // the process ran nothing on a GPU: nothing to starve
	}
	perThread := map[model.ThreadID][]model.Interval{}
	all := make([]model.Interval, 0, len(stalls))
	for _, s := range stalls {
		perThread[s.thread] = append(perThread[s.thread], s.iv)
		all = append(all, s.iv)
	}
	union := detectors.Union(all)
	overlap := detectors.Total(detectors.Intersect(union, v.Idle))
	span := v.Span.Len()
	share := detectors.Pct(float64(overlap), float64(span))
	var sev model.Severity
	switch {
	case share >= p.Param("warn_pct"):
		sev = model.SevWarning
	case share >= p.Param("info_pct"):
		sev = model.SevInfo
	default:
		return
	}

	type thr struct {
		id    model.ThreadID
		stall model.Duration
	}
	var thrs []thr
	var stallTime model.Duration
	for id, ivs := range perThread {
		d := detectors.Total(detectors.Union(ivs))
		stallTime += d
		thrs = append(thrs, thr{id, d})
	}
	sort.Slice(thrs, func(i, j int) bool {
		if thrs[i].stall != thrs[j].stall {
			return thrs[i].stall > thrs[j].stall
		}
		return thrs[i].id < thrs[j].id
	})
	var names []string
	for i, x := range thrs {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(thrs)-5))
			break
		}
		names = append(names, fmt.Sprintf("%s %s", detectors.ThreadLabel(t, x.id), x.stall))
	}
	launcher := launchThread(t, pid)
	proc := fmt.Sprintf("process %d", pid)
	if n := t.ProcessName(pid); n != "" {
		proc += " (" + n + ")"
	}
	verb := "waited"
	if conf != model.Measured {
		verb = "apparently waited" // inferred from indirect signatures
	}
	msg := fmt.Sprintf("Python threads of %s %s for the GIL for %s (%d stall(s); source: %s); %s of it overlaps GPU idle time, %s%% of the %s GPU span (GPU idle in all: %s). Waiting threads: %s.",
		proc, verb, stallTime, len(stalls), src, overlap, detectors.FormatFloat(share), span, detectors.Total(v.Idle), strings.Join(names, ", "))
	if launcher != model.NoThread {
		if ivs, ok := perThread[launcher]; ok {
			lu := detectors.Union(ivs)
			msg += fmt.Sprintf(" The thread that launches the kernels, %s, is among them: %s stalled, %s of it with the GPU idle.",
				detectors.ThreadLabel(t, launcher), detectors.Total(lu), detectors.Total(detectors.Intersect(lu, v.Idle)))
		}
	}
	if len(holders) > 0 {
		var hs []string
		for _, id := range sortedByDur(holders) {
			if t.Thread(id).PID == pid {
				hs = append(hs, fmt.Sprintf("%s %s", detectors.ThreadLabel(t, id), holders[id]))
			}
		}
		if len(hs) > 0 {
			if src == srcGIL {
				msg += " The GIL was held meanwhile by: " + strings.Join(hs, ", ") + "."
			} else {
				msg += " Meanwhile Python ran on: " + strings.Join(hs, ", ") + "."
			}
		}
	}

	f := model.Finding{
		Severity: sev,
		Title: fmt.Sprintf("Python threads waited %s for the GIL, %s of it with the GPU idle",
			stallTime, overlap),
		Message:        msg,
		Confidence:     conf,
		Recommendation: recommendation,
		Metrics: []model.Metric{
			{Name: "stall_time", Value: float64(stallTime), Unit: "ns"},
			{Name: "stall_wall_time", Value: float64(detectors.Total(union)), Unit: "ns"},
			{Name: "stalls", Value: float64(len(stalls)), Unit: "count"},
			{Name: "threads", Value: float64(len(thrs)), Unit: "count"},
			{Name: "gpu_idle_overlap", Value: float64(overlap), Unit: "ns"},
			{Name: "gpu_idle_ns", Value: float64(overlap), Unit: "ns"},
			{Name: "gpu_idle_overlap_share", Value: share, Unit: "%", Num: float64(overlap), Den: float64(span)},
			{Name: "gpu_idle", Value: float64(detectors.Total(v.Idle)), Unit: "ns"},
		},
	}
	f.Evidence = evidence(t, v, stalls)
	p.Report(f)
}

// single reports whether all stalls are in one process.
func single(t *model.Trace, stalls []stall) bool {
	if len(stalls) == 0 {
		return false
	}
	pid := t.Thread(stalls[0].thread).PID
	for i := range stalls {
		if t.Thread(stalls[i].thread).PID != pid {
			return false
		}
	}
	return true
}

const recommendation = "Keep the thread that launches GPU work free of GIL contention: move data loading and preprocessing to processes (DataLoader num_workers > 0) instead of threads, avoid Python-heavy callbacks, logging and metric threads in the step loop, batch work so fewer Python calls are made per step, and capture the step in a CUDA Graph (torch.compile mode=\"reduce-overhead\") so that launches do not need the interpreter."

// evidence returns the stalls that overlap the most GPU idle time (then the
// longest), up to five.
func evidence(t *model.Trace, v *gpuView, stalls []stall) []model.Evidence {
	type scored struct {
		s    *stall
		idle model.Duration
	}
	worse := func(a, b scored) bool {
		if a.idle != b.idle {
			return a.idle > b.idle
		}
		if a.s.iv.Len() != b.s.iv.Len() {
			return a.s.iv.Len() > b.s.iv.Len()
		}
		return a.s.iv.Start < b.s.iv.Start
	}
	// Keep the five worst in a small sorted slice: stalls may be many.
	sc := make([]scored, 0, 6)
	for i := range stalls {
		x := scored{&stalls[i], detectors.Overlap(v.Idle, stalls[i].iv.Start, stalls[i].iv.End)}
		if len(sc) == 5 && !worse(x, sc[4]) {
			continue
		}
		j := sort.Search(len(sc), func(j int) bool { return worse(x, sc[j]) })
		sc = append(sc, scored{})
		copy(sc[j+1:], sc[j:])
		sc[j] = x
		if len(sc) > 5 {
			sc = sc[:5]
		}
	}
	var ev []model.Evidence
	for i := 0; i < len(sc) && i < 5; i++ {
		s := sc[i].s
		note := fmt.Sprintf("%s waits %s for the GIL, GPU idle %s of it", detectors.ThreadLabel(t, s.thread), s.iv.Len(), sc[i].idle)
		if s.note != "" {
			note += "; " + s.note
		}
		ev = append(ev, model.Evidence{Rank: t.Rank, Device: v.FirstDevice(), Stream: model.NoStream, Thread: detectors.TID(t, s.thread),
			Start: s.iv.Start, End: s.iv.End, Note: note, GPUIdle: sc[i].idle, GPUIdleKnown: true})
	}
	return ev
}

func sortedByDur(m map[model.ThreadID]model.Duration) []model.ThreadID {
	ids := make([]model.ThreadID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if m[ids[i]] != m[ids[j]] {
			return m[ids[i]] > m[ids[j]]
		}
		return ids[i] < ids[j]
	})
	return ids
}

// launchThread returns the thread of process pid with the most kernel
// launches, or NoThread.
func launchThread(t *model.Trace, pid int64) model.ThreadID {
	counts := map[model.ThreadID]int{}
	run, runN := model.NoThread, 0 // launches come in long runs per thread
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if t.CallClass(c) != model.APILaunch && t.CallClass(c) != model.APIGraphLaunch || c.Thread == model.NoThread {
			continue
		}
		if c.Thread != run {
			if runN > 0 {
				counts[run] += runN
			}
			run, runN = c.Thread, 0
		}
		runN++
	}
	if runN > 0 {
		counts[run] += runN
	}
	for th := range counts {
		if t.Thread(th).PID != pid {
			delete(counts, th)
		}
	}
	best, n := model.NoThread, 0
	for id, c := range counts {
		if c > n || (c == n && id < best) {
			best, n = id, c
		}
	}
	return best
}

// fromGIL returns the explicit GIL waiting intervals.
func fromGIL(t *model.Trace) []stall {
	var out []stall
	for i := range t.GIL {
		g := &t.GIL[i]
		if g.State == model.GILWaiting && g.End > g.Start && g.Thread != model.NoThread {
			out = append(out, stall{thread: g.Thread, iv: model.Interval{Start: g.Start, End: g.End}})
		}
	}
	return out
}

// gilHolders sums, per thread, the time it held the GIL while some other
// thread of its process waited for it.
func gilHolders(t *model.Trace, stalls []stall) map[model.ThreadID]model.Duration {
	waits := map[int64][]model.Interval{}
	for _, s := range stalls {
		pid := t.Thread(s.thread).PID
		waits[pid] = append(waits[pid], s.iv)
	}
	for pid, ivs := range waits {
		waits[pid] = detectors.Union(ivs)
	}
	held := map[model.ThreadID][]model.Interval{}
	for i := range t.GIL {
		g := &t.GIL[i]
		if g.State == model.GILHeld && g.Thread != model.NoThread && g.End > g.Start {
			held[g.Thread] = append(held[g.Thread], model.Interval{Start: g.Start, End: g.End})
		}
	}
	out := map[model.ThreadID]model.Duration{}
	for th, ivs := range held {
		if d := detectors.Total(detectors.Intersect(detectors.Union(ivs), waits[t.Thread(th).PID])); d > 0 {
			out[th] = d
		}
	}
	return out
}

// pythonThreads marks the threads that run Python: by process or thread
// name, by Python frames on the thread, or by Python frames in the call
// chains of its OS calls.
func pythonThreads(t *model.Trace) []bool {
	py := make([]bool, len(t.Threads))
	for i, th := range t.Threads {
		py[i] = pythonName(th.Name) || pythonName(t.ProcessName(th.PID))
	}
	for i := range t.Ranges {
		if r := &t.Ranges[i]; r.Kind == model.RangePython && r.Thread >= 0 && int(r.Thread) < len(py) {
			py[r.Thread] = true
		}
	}
	verdict := chainVerdicts(t)
	for i := range t.OSCalls {
		o := &t.OSCalls[i]
		if o.Thread >= 0 && int(o.Thread) < len(py) && o.CallChain >= 0 && verdict[o.CallChain]&chainPython != 0 {
			py[o.Thread] = true
		}
	}
	return py
}

func pythonName(n string) bool {
	l := strings.ToLower(n)
	return strings.Contains(l, "python") || strings.HasPrefix(l, "pt_")
}

func hasOSOnPython(t *model.Trace, py []bool) bool {
	for i := range t.OSCalls {
		if th := t.OSCalls[i].Thread; th >= 0 && int(th) < len(py) && py[th] {
			return true
		}
	}
	return false
}

// Call chain verdicts (bits).
const (
	chainResolved = 1 << iota // at least one frame has a symbol name
	chainGIL                  // a frame takes the GIL
	chainPython               // a frame is in the interpreter
)

// gilFrames are interpreter functions on the path that waits for the GIL.
var gilFrames = []string{"take_gil", "PyEval_RestoreThread", "PyEval_AcquireThread", "PyEval_AcquireLock", "PyGILState_Ensure", "_PyThreadState_Attach"}

func chainVerdicts(t *model.Trace) []uint8 {
	out := make([]uint8, len(t.CallChains))
	for i, c := range t.CallChains {
		var v uint8
		for _, id := range c {
			f := t.Str(id)
			if f == "" || strings.HasPrefix(f, "0x") {
				continue
			}
			v |= chainResolved
			for _, g := range gilFrames {
				if strings.Contains(f, g) {
					v |= chainGIL | chainPython
				}
			}
			if strings.HasPrefix(f, "_Py") || strings.HasPrefix(f, "Py") || strings.Contains(f, "libpython") {
				v |= chainPython
			}
		}
		out[i] = v
	}
	return out
}

// waitName reports whether an OS call name is a timed condition or futex
// wait, the primitive CPython's take_gil waits on.
func waitName(n string) bool {
	if i := strings.IndexByte(n, '@'); i >= 0 {
		n = n[:i]
	}
	switch strings.ToLower(strings.TrimSpace(n)) {
	case "pthread_cond_timedwait", "pthread_cond_clockwait", "futex", "__futex_abstimed_wait_common", "__futex_abstimed_wait_cancelable64":
		return true
	}
	return false
}

// fromOSRT finds GIL waits in OS runtime calls on Python threads: episodes
// of back-to-back timed waits, each timing out at about the switch interval
// (the GIL's drop-request cycle), or any wait whose call chain passes
// through take_gil. Waits whose resolved call chain does not reach the GIL
// are left out.
func fromOSRT(p *detectors.Pass, t *model.Trace, py []bool) []stall {
	sw := model.Duration(p.Param("switch_interval_us") * 1e3)
	tol := model.Duration(float64(sw) * p.Param("switch_tol_pct") / 100)
	maxGap := model.Time(p.Param("osrt_max_gap_us") * 1e3)
	minTimeouts := int(p.Param("osrt_min_timeouts"))
	verdict := chainVerdicts(t)
	names := map[model.StringID]bool{}

	type episode struct {
		start, end model.Time
		waits      int
		timeouts   int
		gil        bool
	}
	open := map[model.ThreadID]*episode{}
	var out []stall
	flush := func(th model.ThreadID, e *episode) {
		if e.gil || e.timeouts >= minTimeouts {
			note := fmt.Sprintf("%d timed waits, %d at the %s switch interval", e.waits, e.timeouts, sw)
			if e.gil {
				note += ", call chain through take_gil"
			}
			out = append(out, stall{thread: th, iv: model.Interval{Start: e.start, End: e.end}, note: note})
		}
	}
	for i := range t.OSCalls {
		o := &t.OSCalls[i]
		th := o.Thread
		if th < 0 || int(th) >= len(py) || !py[th] {
			continue
		}
		w, ok := names[o.Name]
		if !ok {
			w = waitName(t.Str(o.Name))
			names[o.Name] = w
		}
		if !w || o.End <= o.Start {
			continue
		}
		d := model.Interval{Start: o.Start, End: o.End}.Len()
		gil := false
		if o.CallChain >= 0 && int(o.CallChain) < len(verdict) {
			v := verdict[o.CallChain]
			if v&chainResolved != 0 && v&chainGIL == 0 {
				continue // a resolved chain that does not take the GIL: some other wait
			}
			gil = v&chainGIL != 0
		}
		if !gil && d > sw+tol {
			continue // longer than a GIL wait can last before timing out
		}
		timeout := d >= sw-tol && d <= sw+tol
		e := open[th]
		if e != nil && o.Start-e.end > maxGap {
			flush(th, e)
			e = nil
		}
		if e == nil {
			e = &episode{start: o.Start, end: o.End}
			open[th] = e
		}
		e.end = max(e.end, o.End)
		e.waits++
		if timeout {
			e.timeouts++
		}
		e.gil = e.gil || gil
	}
	ths := make([]model.ThreadID, 0, len(open))
	for th := range open {
		ths = append(ths, th)
	}
	sort.Slice(ths, func(i, j int) bool { return ths[i] < ths[j] })
	for _, th := range ths {
		flush(th, open[th])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].iv.Start < out[j].iv.Start })
	return out
}

// pythonProcesses returns the processes with Python frames on at least two
// threads, with those threads.
func pythonProcesses(t *model.Trace) map[int64][]model.ThreadID {
	seen := map[model.ThreadID]bool{}
	for i := range t.Ranges {
		if r := &t.Ranges[i]; r.Kind == model.RangePython && r.Thread != model.NoThread {
			seen[r.Thread] = true
		}
	}
	by := map[int64][]model.ThreadID{}
	for th := range seen {
		pid := t.Thread(th).PID
		by[pid] = append(by[pid], th)
	}
	for pid, ths := range by {
		if len(ths) < 2 {
			delete(by, pid)
			continue
		}
		sort.Slice(ths, func(i, j int) bool { return ths[i] < ths[j] })
	}
	return by
}

// fromPython infers GIL stalls from Python stacks (Kineto with_stack): in a
// process whose threads' Python activity never overlaps (the GIL serialises
// them), the silences of the launching thread during which another thread
// runs Python. A thread "runs" during its innermost Python frames and its
// CPU ops and API calls. holders sums, per other thread, the Python time
// that filled the launching thread's silences.
func fromPython(p *detectors.Pass, t *model.Trace) (out []stall, holders map[model.ThreadID]model.Duration, reason string) {
	minGap := model.Duration(p.Param("python_min_gap_us") * 1e3)
	maxOverlap := p.Param("python_overlap_max_pct")
	running := runningIntervals(t)
	holders = map[model.ThreadID]model.Duration{}
	procs := pythonProcesses(t)
	pids := make([]int64, 0, len(procs))
	for pid := range procs {
		pids = append(pids, pid)
	}
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	var reasons []string
	for _, pid := range pids {
		l := launchThread(t, pid)
		ths := procs[pid]
		isPy := false
		for _, th := range ths {
			isPy = isPy || th == l
		}
		if !isPy {
			reasons = append(reasons, fmt.Sprintf("process %d: no Python thread launches kernels", pid))
			continue
		}
		runL := running[l]
		var others []model.Interval
		for _, th := range ths {
			if th != l {
				others = append(others, running[th]...)
			}
		}
		others = detectors.Union(others)
		ov := detectors.Total(detectors.Intersect(runL, others))
		small := min(detectors.Total(runL), detectors.Total(others))
		if float64(ov) > float64(small)*maxOverlap/100 {
			reasons = append(reasons, fmt.Sprintf("process %d: Python activity on its threads overlaps (%s), so the GIL does not serialise them", pid, ov))
			continue
		}
		// Silences of the launching thread, cut to the moments another
		// thread ran; one stall per silence, from the first to the last such
		// moment. Each step is a linear merge of sorted lists.
		gaps := detectors.Gaps(runL, minGap)
		busy := detectors.Intersect(gaps, others)
		var ivs []model.Interval
		j := 0
		for _, g := range gaps {
			for j < len(busy) && busy[j].End <= g.Start {
				j++
			}
			k := j
			for k < len(busy) && busy[k].Start < g.End {
				k++
			}
			if k > j {
				ivs = append(ivs, model.Interval{Start: busy[j].Start, End: busy[k-1].End})
			}
			j = k
		}
		who := make([][]string, len(ivs))
		for _, th := range ths {
			if th == l {
				continue
			}
			label := detectors.ThreadLabel(t, th)
			inter := detectors.Intersect(ivs, running[th])
			holders[th] += detectors.Total(inter)
			s := 0
			for _, x := range inter {
				for s < len(ivs) && ivs[s].End <= x.Start {
					s++
				}
				if s < len(ivs) {
					if n := len(who[s]); n == 0 || who[s][n-1] != label {
						who[s] = append(who[s], label)
					}
				}
			}
		}
		for i, iv := range ivs {
			out = append(out, stall{thread: l, iv: iv, note: "Python ran on " + strings.Join(who[i], ", ")})
		}
	}
	return out, holders, strings.Join(reasons, "; ")
}

// runningIntervals returns, per thread, the union of its innermost Python
// frames, CPU ops and API calls. Each of the three comes in start order, so
// they are merged rather than sorted.
func runningIntervals(t *model.Trace) map[model.ThreadID][]model.Interval {
	type lists struct{ leaves, ops, apis []model.Interval }
	by := map[model.ThreadID]*lists{}
	get := func(th model.ThreadID) *lists {
		l := by[th]
		if l == nil {
			l = &lists{}
			by[th] = l
		}
		return l
	}
	// Python frames: a frame is innermost when the next frame on its thread
	// starts at or after its end.
	lastPy := map[model.ThreadID]int{}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Thread == model.NoThread || r.End <= r.Start {
			continue
		}
		switch r.Kind {
		case model.RangePython:
			if j, ok := lastPy[r.Thread]; ok && r.Start >= t.Ranges[j].End {
				l := get(r.Thread)
				l.leaves = append(l.leaves, model.Interval{Start: t.Ranges[j].Start, End: t.Ranges[j].End})
			}
			lastPy[r.Thread] = i
		case model.RangeCPUOp:
			l := get(r.Thread)
			l.ops = append(l.ops, model.Interval{Start: r.Start, End: r.End})
		}
	}
	for th, j := range lastPy {
		l := get(th)
		l.leaves = append(l.leaves, model.Interval{Start: t.Ranges[j].Start, End: t.Ranges[j].End})
	}
	var last model.ThreadID = model.NoThread
	var ll *lists
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if c.Thread == model.NoThread {
			continue
		}
		if c.Thread != last || ll == nil {
			last, ll = c.Thread, get(c.Thread)
		}
		ll.apis = append(ll.apis, model.Interval{Start: c.Start, End: c.End})
	}
	out := make(map[model.ThreadID][]model.Interval, len(by))
	for th, l := range by {
		out[th] = detectors.UnionInPlace(mergeSorted(mergeSorted(l.leaves, l.ops), l.apis))
	}
	return out
}
