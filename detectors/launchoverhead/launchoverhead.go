package launchoverhead

import (
	"fmt"
	"sort"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the launch-overhead rule.
var Detector = &detectors.Detector{
	ID:       "launch-overhead",
	Title:    "Launch-bound device: idle in short gaps",
	Layer:    model.LayerKernel,
	Severity: model.SevWarning,
	Doc:      doc,
	Needs:    []model.Capability{model.CapKernels},
	Formats:  detectors.TimelineFormats,
	Params: []detectors.Param{
		{Name: "min_gap_us", Default: 50, Unit: "µs", Doc: "gaps up to this long are short (kernel-gap counts the longer ones)"},
		{Name: "info_pct", Default: 5, Unit: "%", Doc: "starved short-gap idle share of the span at or above which the finding is reported (info)"},
		{Name: "warn_pct", Default: 10, Unit: "%", Doc: "starved short-gap idle share at or above which the finding is a warning"},
		{Name: "error_pct", Default: 40, Unit: "%", Doc: "starved short-gap idle share at or above which the finding is an error"},
		{Name: "min_gaps", Default: 100, Unit: "count", Doc: "starved short gaps needed before the rule reports anything"},
	},
	Run: run,
}

// tenths is how many parts of the span the evidence weighs.
const tenths = 10

// Device is the analysis of one device. Its Feed keeps no Gaps: they are
// counted as the feed finds them.
type Device struct {
	Device model.DeviceID
	Feed   detectors.Feed
	// Window is the span, or its union with the profiler steps.
	Window    []model.Interval
	WindowLen model.Duration
	Steps     bool
	// Short gaps (no longer than the threshold) inside Window.
	ShortCount, StarvedCount int
	ShortIdle, StarvedIdle   model.Duration
	// Idle is all idle time inside Window.
	Idle model.Duration
	// The starved short-gap idle and count in each tenth of the span
	// (the evidence windows).
	tenthIdle  [tenths]model.Duration
	tenthCount [tenths]int
	// Kernels on the device, their median duration, and the median duration
	// of their launch calls (0 when none is linked).
	Kernels       int
	KernelP50     model.Duration
	LaunchP50     model.Duration
	LaunchesFound int
}

// StarvedPct is the starved short-gap idle share of the window.
func (d *Device) StarvedPct() float64 { return pct(d.StarvedIdle, d.WindowLen) }

func pct(a, b model.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// Analyze measures every device of t; short gaps are those no longer than
// minGap.
func Analyze(t *model.Trace, minGap model.Duration) []Device {
	ids, by := detectors.DeviceActivities(t)
	var out []Device
	for _, id := range ids {
		a := by[id]
		if a.Len() == 0 {
			continue
		}
		d := Device{Device: id}
		// The feed's span, known before the feed: its gaps are counted as
		// they come, not kept (one per kernel on launch-bound captures).
		first := a.At(0)
		span := model.Interval{Start: first.Start, End: first.End}
		for i := range a.Len() {
			span.End = max(span.End, a.At(i).End)
		}
		d.Window = []model.Interval{span}
		if steps := detectors.StepWindows(t, span); len(steps) > 0 {
			d.Window, d.Steps = steps, true
		}
		d.WindowLen = detectors.Total(d.Window)
		step := span.Len() / tenths
		d.Feed = detectors.NewFeedGaps(t, func(g detectors.FeedGap) {
			in := detectors.Overlap(d.Window, g.Start, g.End)
			if in == 0 {
				return
			}
			d.Idle += in
			if g.Len() > minGap {
				return
			}
			d.ShortCount++
			d.ShortIdle += in
			if g.Queued == 0 {
				d.StarvedCount++
				d.StarvedIdle += in
				if step > 0 {
					i := min(tenths-1, int((g.Start-span.Start)/model.Time(step)))
					d.tenthIdle[i] += in
					d.tenthCount[i]++
				}
			}
		}, a)
		// Medians of the kernels' and their launch calls' durations, read
		// from the list (a sorted copy of each was 16 MB per million kernels).
		kernels := func(yield func(int64)) {
			for i := range a.Len() {
				if k := a.At(i); k.IsKernel {
					yield(int64(k.End - k.Start))
				}
			}
		}
		launches := func(yield func(int64)) {
			for i := range a.Len() {
				if k := a.At(i); k.IsKernel && k.Launch >= 0 {
					if c := &t.APICalls[k.Launch]; t.CallClass(c) == model.APILaunch || t.CallClass(c) == model.APIGraphLaunch {
						yield(int64(c.End - c.Start))
					}
				}
			}
		}
		kernels(func(int64) { d.Kernels++ })
		launches(func(int64) { d.LaunchesFound++ })
		d.KernelP50 = model.Duration(detectors.Median(d.Kernels, kernels))
		d.LaunchP50 = model.Duration(detectors.Median(d.LaunchesFound, launches))
		out = append(out, d)
	}
	return out
}

func run(p *detectors.Pass) error {
	minGap := model.Duration(p.Param("min_gap_us") * float64(model.Microsecond))
	for _, t := range p.Set.Traces {
		if len(t.Kernels) == 0 {
			p.NotMeasurable("%s: no GPU kernels in the capture", t.Path)
			continue
		}
		prod := detectors.DetectProducer(t)
		for _, d := range Analyze(t, minGap) {
			if d.Kernels == 0 {
				continue
			}
			if d.Feed.Linked == 0 {
				if d.ShortCount >= int(p.Param("min_gaps")) {
					p.NotMeasurable("%s: device %d: %d short gaps hold %s of idle time, but the capture has no launch calls linked to the kernels, so a starved GPU cannot be told from one waiting on dependencies",
						t.Path, d.Device, d.ShortCount, d.ShortIdle)
				}
				continue
			}
			share := d.StarvedPct()
			if d.StarvedCount < int(p.Param("min_gaps")) || share < p.Param("info_pct") {
				continue
			}
			sev := model.SevInfo
			switch {
			case share >= p.Param("error_pct"):
				sev = model.SevError
			case share >= p.Param("warn_pct"):
				sev = model.SevWarning
			}
			p.Report(finding(t, &d, sev, minGap, prod))
		}
	}
	return nil
}

func finding(t *model.Trace, d *Device, sev model.Severity, minGap model.Duration, prod detectors.ProducerInfo) model.Finding {
	f := &d.Feed
	devName := detectors.DeviceLabel(t, d.Device)
	rank := detectors.RankPrefix(t)
	where := "its span"
	if d.Steps {
		where = "the profiler steps"
	}
	spanSec := float64(f.Span.Len()) / 1e9
	kps := 0.0
	if spanSec > 0 {
		kps = float64(d.Kernels) / spanSec
	}
	share := d.StarvedPct()
	idlePct := pct(d.Idle, d.WindowLen)
	emptyPct := pct(f.QueueEmpty, f.Span.Len())
	msg := fmt.Sprintf("%s%s was idle %.1f%% of %s (%s); %s (%.1f%%) of it in %d gaps no longer than %s that began with an empty launch queue (%d short gaps in all, %s). "+
		"It ran %d kernels, %.0f per second, median kernel %s",
		rank, devName, idlePct, where, d.WindowLen, d.StarvedIdle, share, d.StarvedCount, minGap, d.ShortCount, d.ShortIdle,
		d.Kernels, kps, d.KernelP50)
	if d.LaunchesFound > 0 {
		msg += fmt.Sprintf("; median launch call %s", d.LaunchP50)
		if d.LaunchP50 > d.KernelP50 {
			msg += fmt.Sprintf(": one host thread issues at most ~%.0f kernels per second, the GPU finishes ~%.0f (kernels shorter than their launch)",
				perSec(d.LaunchP50), perSec(d.KernelP50))
		}
	}
	msg += fmt.Sprintf(". Launch queue: mean depth %.2f over time (%.2f over its changes, as HTA reports it), max %d, empty %.1f%% of the span.",
		f.QueueMean, f.QueueSampleMean, f.QueueMax, emptyPct)
	if prod.Producer != detectors.ProducerUnknown {
		msg += fmt.Sprintf(" Producer: %s (%s).", prod.Producer, prod.Why)
	}
	fd := model.Finding{
		Severity: sev,
		Title: fmt.Sprintf("%s%s launch-bound: %.1f%% idle in %d short gaps with an empty launch queue (median kernel %s)",
			rank, devName, share, d.StarvedCount, d.KernelP50),
		Message:        msg,
		Recommendation: detectors.LaunchBoundAdvice(prod),
		Confidence:     model.Measured,
		Metrics: []model.Metric{
			{Name: "starved_idle_pct", Value: detectors.Round2(share), Unit: "%", Num: float64(d.StarvedIdle), Den: float64(d.WindowLen)},
			{Name: "starved_idle_ns", Value: float64(d.StarvedIdle), Unit: "ns"},
			{Name: "starved_gap_count", Value: float64(d.StarvedCount), Unit: "count"},
			{Name: "short_gap_idle_ns", Value: float64(d.ShortIdle), Unit: "ns"},
			{Name: "short_gap_count", Value: float64(d.ShortCount), Unit: "count"},
			{Name: "idle_pct", Value: detectors.Round2(idlePct), Unit: "%", Num: float64(d.Idle), Den: float64(d.WindowLen)},
			{Name: "window_ns", Value: float64(d.WindowLen), Unit: "ns"},
			{Name: "kernels", Value: float64(d.Kernels), Unit: "count"},
			{Name: "kernels_per_s", Value: detectors.Round2(kps), Unit: "1/s"},
			{Name: "kernel_p50_ns", Value: float64(d.KernelP50), Unit: "ns"},
			{Name: "launch_call_p50_ns", Value: float64(d.LaunchP50), Unit: "ns"},
			{Name: "queue_mean", Value: detectors.Round2(f.QueueMean), Unit: "count"},
			{Name: "queue_sample_mean", Value: detectors.Round2(f.QueueSampleMean), Unit: "count"},
			{Name: "queue_max", Value: float64(f.QueueMax), Unit: "count"},
			{Name: "queue_empty_pct", Value: detectors.Round2(emptyPct), Unit: "%", Num: float64(f.QueueEmpty), Den: float64(f.Span.Len())},
			{Name: "min_gap_ns", Value: float64(minGap), Unit: "ns"},
		},
	}
	fd.Evidence = evidence(t, d)
	return fd
}

func perSec(d model.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return 1e9 / float64(d)
}

// evidence returns the (up to) three tenths of the span with the most
// starved short-gap idle, in time order, with their queue depth.
func evidence(t *model.Trace, d *Device) []model.Evidence {
	span := d.Feed.Span
	step := span.Len() / tenths
	if step <= 0 {
		return nil
	}
	ws := make([]model.Interval, tenths)
	for i := range ws {
		ws[i] = model.Interval{Start: span.Start + model.Time(step)*model.Time(i), End: span.Start + model.Time(step)*model.Time(i+1)}
	}
	ws[tenths-1].End = span.End
	idle, count := d.tenthIdle, d.tenthCount
	q := d.Feed.QueueMeans(ws)
	idx := []int{}
	for i := range ws {
		if count[i] > 0 {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return idle[idx[a]] > idle[idx[b]] })
	if len(idx) > 3 {
		idx = idx[:3]
	}
	sort.Ints(idx)
	var ev []model.Evidence
	for _, i := range idx {
		ev = append(ev, model.Evidence{Rank: t.Rank, Device: d.Device, Stream: model.NoStream, Thread: -1,
			Start: ws[i].Start, End: ws[i].End,
			Note: fmt.Sprintf("%d short gaps with an empty queue, %s idle (%.1f%% of this tenth of the span); mean queue depth %.2f",
				count[i], idle[i], pct(idle[i], ws[i].Len()), q[i])})
	}
	return ev
}
