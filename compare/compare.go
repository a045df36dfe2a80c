package compare

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Side is one side of the comparison.
type Side struct {
	Report *model.Report
	// Set is the imported traces of the report (optional): step durations are
	// read from its step ranges when no step-latency finding gives them.
	Set *model.TraceSet
}

// DefaultMinOverlap is the kernel-name Jaccard index below which two
// reports are not comparable.
const DefaultMinOverlap = 0.5

// Options adjust the comparison.
type Options struct {
	// MinOverlap is the kernel-name Jaccard index (0..1) below which the
	// sides are "not comparable" (DefaultMinOverlap when 0; negative turns
	// the check off).
	MinOverlap float64
	// FailPct, when > 0, turns on the regression gate: span, step time or
	// GPU busy time growing by more than FailPct percent is a regression.
	FailPct float64
}

// Quantity names.
const (
	QSpan      = "span"
	QBusy      = "gpu_busy"
	QIdle      = "idle"
	QKernelGap = "kernel_gap"
	QStep      = "step_time"
)

// gated lists the quantities the regression gate checks.
var gated = map[string]bool{QSpan: true, QBusy: true, QStep: true}

// Quantity is one headline number on both sides.
type Quantity struct {
	Name  string
	Label string
	Base  model.Duration
	Cand  model.Duration
	// Known is false when either side could not measure it (Why says why).
	Known bool
	Why   string
	// Source says how it was measured, e.g. "median of 12 step ranges".
	Source string
}

// Delta returns Cand - Base.
func (q *Quantity) Delta() model.Duration { return q.Cand - q.Base }

// Pct returns the change relative to the base in percent; ok is false when
// the quantity is unknown or the base is zero.
func (q *Quantity) Pct() (float64, bool) { return Pct(q.Base, q.Cand, q.Known) }

// Pct returns the change from base to cand in percent of base; ok is false
// when the values are not known or base is zero.
func Pct(base, cand model.Duration, known bool) (pct float64, ok bool) {
	if !known || base == 0 {
		return 0, false
	}
	return 100 * float64(cand-base) / float64(base), true
}

// KernelDelta is the change of one kernel name's total time.
type KernelDelta struct {
	Name                 string
	BaseCount, CandCount int64
	BaseTotal, CandTotal model.Duration
}

// Delta returns CandTotal - BaseTotal.
func (k *KernelDelta) Delta() model.Duration { return k.CandTotal - k.BaseTotal }

// Pct returns the change in percent of the base total (ok false for new kernels).
func (k *KernelDelta) Pct() (float64, bool) { return Pct(k.BaseTotal, k.CandTotal, true) }

// Status is "new" (only in the candidate), "gone" (only in the base) or "".
func (k *KernelDelta) Status() string {
	switch {
	case k.BaseCount == 0:
		return "new"
	case k.CandCount == 0:
		return "gone"
	}
	return ""
}

// Classes of GPU time compared per device.
var Classes = []string{"compute", "communication", "memory", "idle"}

// DeviceDelta is one device's time breakdown on both sides (a side that
// lacks the device has a zero summary and In* false).
type DeviceDelta struct {
	Rank          int
	Device        model.DeviceID
	Name          string
	Base, Cand    model.DeviceSummary
	InBase, InCan bool
	// Paired is set when base and candidate devices were paired by order
	// because their (rank, device) keys differ; Cand.Rank/Cand.Device say
	// which candidate device it is.
	Paired bool
}

// Class returns the base and candidate time of class c (one of Classes).
func (d *DeviceDelta) Class(c string) (model.Duration, model.Duration) {
	get := func(s *model.DeviceSummary) model.Duration {
		switch c {
		case "compute":
			return s.Compute
		case "communication":
			return s.Communication
		case "memory":
			return s.Memory
		case "idle":
			return s.Idle
		}
		return 0
	}
	return get(&d.Base), get(&d.Cand)
}

// Regression is one gated quantity that grew beyond the limit.
type Regression struct {
	Quantity string
	Pct      float64
	Limit    float64
}

// Result is the comparison of two reports.
type Result struct {
	BaseInputs, CandInputs []model.Input
	// Comparable is false when the check found the sides too different;
	// Problems says how.
	Comparable bool
	Problems   []string
	// Overlap is the kernel-name Jaccard index.
	Overlap     float64
	Quantities  []Quantity
	Kernels     []KernelDelta
	Devices     []DeviceDelta
	NewFindings []model.Finding
	Resolved    []model.Finding
	// SeverityChanges are findings on both sides whose severity changed.
	SeverityChanges []SeverityChange
	// FailPct is the gate's limit (0 = no gate); Regressions what broke it.
	FailPct     float64
	Regressions []Regression
}

// Regressed reports whether the gate failed.
func (r *Result) Regressed() bool { return len(r.Regressions) > 0 }

// Quantity returns the named quantity.
func (r *Result) Quantity(name string) (Quantity, bool) {
	for _, q := range r.Quantities {
		if q.Name == name {
			return q, true
		}
	}
	return Quantity{}, false
}

// Compare compares base with cand.
func Compare(base, cand Side, opts Options) *Result {
	if opts.MinOverlap == 0 {
		opts.MinOverlap = DefaultMinOverlap
	}
	br, cr := base.Report, cand.Report
	res := &Result{BaseInputs: br.Inputs, CandInputs: cr.Inputs, Comparable: true, FailPct: opts.FailPct}
	res.Kernels, res.Overlap = kernelDeltas(br.Kernels, cr.Kernels)
	res.Devices = deviceDeltas(br.Devices, cr.Devices)
	res.Problems = comparability(br, cr, res.Overlap, opts.MinOverlap)
	res.Comparable = len(res.Problems) == 0
	res.Quantities = []Quantity{
		spanQ(br, cr),
		sumQ(QBusy, "GPU busy", br, cr, func(d *model.DeviceSummary) model.Duration { return d.Busy }),
		sumQ(QIdle, "GPU idle", br, cr, func(d *model.DeviceSummary) model.Duration { return d.Idle }),
		gapQ(br, cr),
		stepQ(base, cand),
	}
	res.NewFindings, res.Resolved, res.SeverityChanges = findingChanges(br.Findings, cr.Findings)
	if opts.FailPct > 0 {
		for _, q := range res.Quantities {
			if p, ok := q.Pct(); ok && gated[q.Name] && p > opts.FailPct {
				res.Regressions = append(res.Regressions, Regression{Quantity: q.Name, Pct: p, Limit: opts.FailPct})
			}
		}
	}
	return res
}

func kernelDeltas(base, cand []model.KernelSummary) ([]KernelDelta, float64) {
	byName := map[string]*KernelDelta{}
	get := func(name string) *KernelDelta {
		k := byName[name]
		if k == nil {
			k = &KernelDelta{Name: name}
			byName[name] = k
		}
		return k
	}
	for _, k := range base {
		d := get(k.Name)
		d.BaseCount += k.Count
		d.BaseTotal += k.Total
	}
	for _, k := range cand {
		d := get(k.Name)
		d.CandCount += k.Count
		d.CandTotal += k.Total
	}
	out := make([]KernelDelta, 0, len(byName))
	both := 0
	for _, k := range byName {
		if k.BaseCount > 0 && k.CandCount > 0 {
			both++
		}
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := absDur(out[i].Delta()), absDur(out[j].Delta())
		if a != b {
			return a > b
		}
		return out[i].Name < out[j].Name
	})
	overlap := 1.0
	if len(byName) > 0 {
		overlap = float64(both) / float64(len(byName))
	}
	return out, overlap
}

func absDur(d model.Duration) model.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// deviceDeltas pairs the devices of both sides by (rank, device). When the
// sides hold the same number of devices under different keys (the candidate
// ran on other GPUs or ranks), they are paired in (rank, device) order.
func deviceDeltas(base, cand []model.DeviceSummary) []DeviceDelta {
	sorted := func(in []model.DeviceSummary) []model.DeviceSummary {
		out := append([]model.DeviceSummary(nil), in...)
		sort.SliceStable(out, func(i, j int) bool {
			if out[i].Rank != out[j].Rank {
				return out[i].Rank < out[j].Rank
			}
			return out[i].Device < out[j].Device
		})
		return out
	}
	b, c := sorted(base), sorted(cand)
	sameKeys := len(b) == len(c)
	for i := 0; sameKeys && i < len(b); i++ {
		sameKeys = b[i].Rank == c[i].Rank && b[i].Device == c[i].Device
	}
	var out []DeviceDelta
	if len(b) == len(c) {
		for i := range b {
			d := DeviceDelta{Rank: b[i].Rank, Device: b[i].Device, Name: b[i].Name, Base: b[i], Cand: c[i], InBase: true, InCan: true}
			if !sameKeys {
				d.Paired = true
			}
			out = append(out, d)
		}
		return out
	}
	i, j := 0, 0
	for i < len(b) || j < len(c) {
		switch {
		case j == len(c) || i < len(b) && (b[i].Rank < c[j].Rank || b[i].Rank == c[j].Rank && b[i].Device < c[j].Device):
			out = append(out, DeviceDelta{Rank: b[i].Rank, Device: b[i].Device, Name: b[i].Name, Base: b[i], InBase: true})
			i++
		case i == len(b) || c[j].Rank != b[i].Rank || c[j].Device != b[i].Device: // c sorts first
			out = append(out, DeviceDelta{Rank: c[j].Rank, Device: c[j].Device, Name: c[j].Name, Cand: c[j], InCan: true})
			j++
		default:
			out = append(out, DeviceDelta{Rank: b[i].Rank, Device: b[i].Device, Name: b[i].Name, Base: b[i], Cand: c[j], InBase: true, InCan: true})
			i++
			j++
		}
	}
	return out
}

func comparability(br, cr *model.Report, overlap, minOverlap float64) []string {
	var probs []string
	if len(br.Inputs) != len(cr.Inputs) {
		probs = append(probs, fmt.Sprintf("base has %d input(s), candidate %d", len(br.Inputs), len(cr.Inputs)))
	}
	names := func(ds []model.DeviceSummary) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = d.Name
		}
		sort.Strings(out)
		return out
	}
	bn, cn := names(br.Devices), names(cr.Devices)
	switch {
	case len(bn) != len(cn):
		probs = append(probs, fmt.Sprintf("base has %d device(s), candidate %d", len(bn), len(cn)))
	case strings.Join(bn, "\x00") != strings.Join(cn, "\x00"):
		probs = append(probs, fmt.Sprintf("device names differ (base %s; candidate %s)", deviceList(bn), deviceList(cn)))
	}
	if minOverlap > 0 && overlap < minOverlap {
		probs = append(probs, fmt.Sprintf("kernel-name overlap %.1f%% is below %.1f%%: the traces run different code", 100*overlap, 100*minOverlap))
	}
	return probs
}

func deviceList(names []string) string {
	counts := map[string]int{}
	var order []string
	for _, n := range names {
		if n == "" {
			n = "unnamed"
		}
		if counts[n] == 0 {
			order = append(order, n)
		}
		counts[n]++
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = fmt.Sprintf("%d× %s", counts[n], n)
	}
	return strings.Join(parts, ", ")
}

func spanQ(br, cr *model.Report) Quantity {
	q := Quantity{Name: QSpan, Label: "span", Source: "longest device span"}
	maxSpan := func(r *model.Report) model.Duration {
		var m model.Duration
		for _, d := range r.Devices {
			m = max(m, d.Span)
		}
		return m
	}
	q.Base, q.Cand = maxSpan(br), maxSpan(cr)
	q.Known = len(br.Devices) > 0 && len(cr.Devices) > 0
	if !q.Known {
		q.Why = "a side has no GPU activity"
	}
	return q
}

func sumQ(name, label string, br, cr *model.Report, f func(*model.DeviceSummary) model.Duration) Quantity {
	q := Quantity{Name: name, Label: label, Source: "sum over devices"}
	sum := func(r *model.Report) model.Duration {
		var s model.Duration
		for i := range r.Devices {
			s += f(&r.Devices[i])
		}
		return s
	}
	q.Base, q.Cand = sum(br), sum(cr)
	q.Known = len(br.Devices) > 0 && len(cr.Devices) > 0
	if !q.Known {
		q.Why = "a side has no GPU activity"
	}
	return q
}

const kernelGapRule = "kernel-gap"

func gapQ(br, cr *model.Report) Quantity {
	q := Quantity{Name: QKernelGap, Label: "kernel gaps", Source: "kernel-gap gap_total_ns"}
	total := func(r *model.Report) (model.Duration, bool) {
		for _, nm := range r.NotMeasurable {
			if nm.Rule == kernelGapRule {
				return 0, false
			}
		}
		var s float64
		for i := range r.Findings {
			if r.Findings[i].Rule != kernelGapRule {
				continue
			}
			if v, ok := r.Findings[i].SumOverRanks("gap_total_ns"); ok {
				s += v // every rank of a finding grouped across ranks
			}
		}
		return model.Duration(math.Round(s)), true
	}
	b, okB := total(br)
	c, okC := total(cr)
	q.Base, q.Cand, q.Known = b, c, okB && okC
	if !q.Known {
		q.Why = "kernel-gap was not measurable on a side"
	}
	return q
}

// stepPhaseOrder is the order in which a phase's p50 step time stands for
// a run's step time: the steady decode loop first, then prefill and mixed.
// Steps of no known phase (training ProfilerStep#N) are measured from the
// step ranges (stepMedian), as before the step model.
var stepPhaseOrder = []model.StepPhase{model.PhaseDecode, model.PhasePrefill, model.PhaseMixed}

// stepP50 returns the p50 step time of the first phase of stepPhaseOrder
// that both reports have (Report.StepPhases), the phase and the step counts.
func stepP50(base, cand *model.Report) (b, c model.Duration, ph model.StepPhase, nb, nc int64, ok bool) {
	find := func(r *model.Report, ph model.StepPhase) *model.PhaseStats {
		for i := range r.StepPhases {
			if r.StepPhases[i].Phase == ph {
				return &r.StepPhases[i]
			}
		}
		return nil
	}
	for _, ph := range stepPhaseOrder {
		pb, pc := find(base, ph), find(cand, ph)
		if pb != nil && pc != nil {
			return model.Duration(math.Round(pb.P50)), model.Duration(math.Round(pc.P50)), ph, pb.Count, pc.Count, true
		}
	}
	return 0, 0, "", 0, 0, false
}

// stepMedian returns the median duration of the set's step ranges and how
// many there were.
func stepMedian(set *model.TraceSet) (model.Duration, int) {
	if set == nil {
		return 0, 0
	}
	var durs []model.Duration
	for _, t := range set.Traces {
		for i := range t.Ranges {
			r := &t.Ranges[i]
			if r.Kind == model.RangeStep && r.End > r.Start {
				durs = append(durs, r.End.Sub(r.Start))
			}
		}
	}
	if len(durs) == 0 {
		return 0, 0
	}
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	n := len(durs)
	if n%2 == 1 {
		return durs[n/2], n
	}
	return (durs[n/2-1] + durs[n/2]) / 2, n
}

func stepQ(base, cand Side) Quantity {
	q := Quantity{Name: QStep, Label: "step time (p50)"}
	if b, c, ph, nb, nc, ok := stepP50(base.Report, cand.Report); ok {
		q.Base, q.Cand, q.Known = b, c, true
		q.Source = fmt.Sprintf("p50 of %d / %d %s steps", nb, nc, ph)
		return q
	}
	b, nb := stepMedian(base.Set)
	c, nc := stepMedian(cand.Set)
	if nb > 0 && nc > 0 {
		q.Base, q.Cand, q.Known = b, c, true
		q.Source = fmt.Sprintf("median of %d / %d step ranges", nb, nc)
		return q
	}
	q.Why = "no step markers (ProfilerStep or step ranges) on a side"
	return q
}

var numberRE = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// findingKey matches findings across runs: rule and title with every number
// replaced by '#', since titles carry measured values.
func findingKey(f *model.Finding) string {
	return f.Rule + "\x00" + numberRE.ReplaceAllString(f.Title, "#")
}

// SeverityChange is a finding present on both sides whose severity changed.
type SeverityChange struct {
	Rule, Title string // the candidate's title
	From, To    model.Severity
}

// findingChanges returns the findings of cand with no counterpart in base
// (added), those of base with none in cand (resolved), counting repeats, and
// the matched pairs whose severity changed.
func findingChanges(base, cand []model.Finding) (added, resolved []model.Finding, changed []SeverityChange) {
	left := map[string][]int{} // key → unmatched base indexes, in order
	for i := range base {
		k := findingKey(&base[i])
		left[k] = append(left[k], i)
	}
	for i := range cand {
		k := findingKey(&cand[i])
		if q := left[k]; len(q) > 0 {
			left[k] = q[1:]
			if b := &base[q[0]]; b.Severity != cand[i].Severity {
				changed = append(changed, SeverityChange{Rule: cand[i].Rule, Title: cand[i].Title, From: b.Severity, To: cand[i].Severity})
			}
			continue
		}
		added = append(added, cand[i])
	}
	unmatched := map[int]bool{}
	for _, q := range left {
		for _, i := range q {
			unmatched[i] = true
		}
	}
	for i := range base {
		if unmatched[i] {
			resolved = append(resolved, base[i])
		}
	}
	return added, resolved, changed
}
