package detectors

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/tracedx/tracedx/model"
)

// Param is one tunable threshold of a detector.
type Param struct {
	Name    string
	Default float64
	Unit    string
	Doc     string
}

// Detector is a described analysis.
type Detector struct {
	// ID is stable: users put it in CI configs and policy files.
	ID    string
	Title string
	Layer model.Layer
	// Doc is Markdown: what the rule finds, how it decides, and how to fix it.
	Doc string
	// Severity is the default severity of the rule's findings.
	Severity model.Severity
	Params   []Param
	// Needs lists capabilities of which at least one trace of the set must
	// have at least one; when none has any, the rule is not measurable and
	// Run is not called. Empty means the rule always runs.
	Needs []model.Capability
	// Formats, when set, lists the input formats the rule applies to; on a
	// set with none of them the rule is silently not applicable (it is not
	// listed as not measurable either).
	Formats []model.Format
	// Run analyses the set; it reports findings and not-measurable reasons
	// through the pass. An error means the rule could not run.
	Run func(p *Pass) error
}

// TimelineFormats are the formats that carry a timeline (as opposed to
// benchmark logs): rules about kernels, host calls and collectives apply to them.
var TimelineFormats = []model.Format{model.FormatKineto, model.FormatNsys}

// Config adjusts how detectors run.
type Config struct {
	// Params overrides parameters: Params[ruleID][paramName].
	Params map[string]map[string]float64
	// Disabled rules do not run.
	Disabled map[string]bool
	// Severity overrides a rule's severity (all of its findings).
	Severity map[string]model.Severity
}

// Pass is what a detector's Run receives.
type Pass struct {
	Det    *Detector
	Set    *model.TraceSet
	params map[string]float64

	findings []model.Finding
	notMeas  []model.NotMeasurable
}

// Param returns the value of the named parameter (the default unless
// overridden). It panics on an undeclared name: that is a programming error
// caught by the registry test.
func (p *Pass) Param(name string) float64 {
	v, ok := p.params[name]
	if !ok {
		panic(fmt.Sprintf("detector %s: undeclared parameter %q", p.Det.ID, name))
	}
	return v
}

// Reported returns how many findings the pass has reported so far.
func (p *Pass) Reported() int { return len(p.findings) }

// Report adds a finding. Rule, layer and (when unset) confidence are filled in.
func (p *Pass) Report(f model.Finding) {
	f.Rule = p.Det.ID
	if f.Layer == "" {
		f.Layer = p.Det.Layer
	}
	if f.Confidence == "" {
		f.Confidence = model.Measured
	}
	if f.Title == "" {
		f.Title = p.Det.Title
	}
	p.findings = append(p.findings, f)
}

// NotMeasurable records why the rule could not answer (for part or all of the set).
func (p *Pass) NotMeasurable(format string, args ...any) {
	p.notMeas = append(p.notMeas, model.NotMeasurable{Rule: p.Det.ID, Reason: fmt.Sprintf(format, args...)})
}

// Result is what running a list of detectors produced.
type Result struct {
	Findings      []model.Finding
	NotMeasurable []model.NotMeasurable
	// Errors are rules that could not run (not findings).
	Errors []error
}

// Run runs every enabled detector over set and returns the findings sorted
// deterministically: by severity (highest first), rule, rank, then first
// evidence start. Detectors only read the set, so they run concurrently (up to
// GOMAXPROCS at once); results are gathered in list order, so the output does
// not depend on scheduling.
func Run(set *model.TraceSet, list []*Detector, cfg Config) Result {
	type outcome struct {
		ran     bool
		pass    *Pass
		err     error
		skipped *model.NotMeasurable
	}
	outs := make([]outcome, len(list))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, d := range list {
		if cfg.Disabled[d.ID] {
			continue
		}
		if len(d.Formats) > 0 && !setHasFormat(set, d.Formats) {
			continue
		}
		if len(d.Needs) > 0 && !setHasAny(set, d.Needs) {
			names := make([]string, len(d.Needs))
			for j, c := range d.Needs {
				names[j] = c.Name()
			}
			outs[i].skipped = &model.NotMeasurable{Rule: d.ID,
				Reason: fmt.Sprintf("the input has none of what this rule needs (%s)", strings.Join(names, ", "))}
			continue
		}
		p := &Pass{Det: d, Set: set, params: map[string]float64{}}
		for _, prm := range d.Params {
			p.params[prm.Name] = prm.Default
		}
		for k, v := range cfg.Params[d.ID] {
			p.params[k] = v
		}
		outs[i].ran, outs[i].pass = true, p
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, d *Detector, p *Pass) {
			defer wg.Done()
			defer func() { <-sem }()
			outs[i].err = safeRun(d, p)
		}(i, d, p)
	}
	wg.Wait()
	var res Result
	for i, d := range list {
		o := outs[i]
		if o.skipped != nil {
			res.NotMeasurable = append(res.NotMeasurable, *o.skipped)
		}
		if !o.ran {
			continue
		}
		if o.err != nil {
			res.Errors = append(res.Errors, fmt.Errorf("rule %s could not run: %w", d.ID, o.err))
			continue
		}
		p := o.pass
		for j := range p.findings {
			if sev, ok := cfg.Severity[d.ID]; ok {
				p.findings[j].Severity = sev
			}
		}
		res.Findings = append(res.Findings, p.findings...)
		res.NotMeasurable = append(res.NotMeasurable, p.notMeas...)
	}
	SortFindings(res.Findings)
	return res
}

func safeRun(d *Detector, p *Pass) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return d.Run(p)
}

func setHasFormat(set *model.TraceSet, formats []model.Format) bool {
	for _, t := range set.Traces {
		for _, f := range formats {
			if t.Format == f {
				return true
			}
		}
	}
	return false
}

func setHasAny(set *model.TraceSet, caps []model.Capability) bool {
	for _, t := range set.Traces {
		for _, c := range caps {
			if t.Caps.Has(c) {
				return true
			}
		}
	}
	return false
}

// SortFindings orders findings deterministically.
func SortFindings(fs []model.Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		ra, rb := firstRank(a), firstRank(b)
		if ra != rb {
			return ra < rb
		}
		sa, sb := firstStart(a), firstStart(b)
		if sa != sb {
			return sa < sb
		}
		return a.Title < b.Title
	})
}

func firstRank(f *model.Finding) int {
	if len(f.Evidence) == 0 {
		return -2
	}
	return f.Evidence[0].Rank
}

func firstStart(f *model.Finding) model.Time {
	if len(f.Evidence) == 0 {
		return 0
	}
	return f.Evidence[0].Start
}
