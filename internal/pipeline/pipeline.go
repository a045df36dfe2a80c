// Package pipeline wires importers, detectors and the breakdown into one
// call: files of one job in, a model.Report out. The CLI commands (analyze,
// batch, diff, export) share it.
//
// Place: cmd → pipeline → {importers, detectors} → model. It prints nothing.
package pipeline

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"

	"github.com/tracedx/tracedx/detectors"
	detall "github.com/tracedx/tracedx/detectors/all"
	"github.com/tracedx/tracedx/detectors/breakdown"
	"github.com/tracedx/tracedx/detectors/summary"
	"github.com/tracedx/tracedx/importers"
	impall "github.com/tracedx/tracedx/importers/all"
	"github.com/tracedx/tracedx/internal/version"
	"github.com/tracedx/tracedx/model"
)

// Options configure a run.
type Options struct {
	// Format forces an input format ("" = sniff each file).
	Format string
	// Window is the breakdown definition: "trace" (default) or "hta".
	Window string
	// Config adjusts detectors (params, disabled rules, severities).
	Config detectors.Config
	// Import tunes the importers.
	Import importers.Options
	// Registry and Detectors default to the built-in ones.
	Registry  *importers.Registry
	Detectors []*detectors.Detector
	// Jobs bounds how many files are imported at once (default: CPUs).
	Jobs int
	// Stdin is read for an input path of "-" (default os.Stdin).
	Stdin io.Reader
	// Steps is the user's step grammar (--steps); nil = built-in grammars only.
	Steps model.StepParser
}

// StdinName is the path reports show for an input read from standard input.
const StdinName = "<stdin>"

func (o *Options) defaults() {
	if o.Window == "" {
		o.Window = breakdown.WindowTrace
	}
	if o.Registry == nil {
		o.Registry = impall.Registry()
	}
	if o.Detectors == nil {
		o.Detectors = detall.Detectors()
	}
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
}

// CheckWindow validates a window name.
func CheckWindow(w string) error {
	switch w {
	case "", breakdown.WindowTrace, breakdown.WindowHTA:
		return nil
	}
	return fmt.Errorf("unknown --window %q (want trace or hta)", w)
}

// Load imports the files of one job (one file per rank) into a TraceSet.
// The first error (an *importers.InputError for unreadable files) stops it.
func Load(ctx context.Context, paths []string, opts Options) (*model.TraceSet, error) {
	opts.defaults()
	if len(paths) == 0 {
		return nil, fmt.Errorf("no input files")
	}
	paths, spool, cleanup, err := spoolStdin(ctx, paths, opts.Stdin)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	traces := make([]*model.Trace, len(paths))
	errs := make([]error, len(paths))
	sem := make(chan struct{}, opts.Jobs)
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, p string) {
			defer wg.Done()
			defer func() { <-sem }()
			defer func() {
				if r := recover(); r != nil {
					errs[i] = &importers.InputError{File: p, Err: fmt.Errorf("internal error while importing: %v", r)}
				}
			}()
			traces[i], errs[i] = opts.Registry.Import(ctx, p, opts.Format, opts.Import)
		}(i, p)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, renameStdin(err, spool)
		}
	}
	for _, t := range traces {
		if spool != "" && t.Path == spool {
			t.Path = StdinName
		}
		capWarnings(t, opts.Import.MaxWarnings)
	}
	traces = splitRanks(traces)
	set := model.NewTraceSet(traces)
	checkRanks(set)
	return set, nil
}

// checkRanks gives ranks to a multi-file set whose ranks are unknown and warns
// about duplicates.
func checkRanks(set *model.TraceSet) {
	if len(set.Traces) < 2 {
		return
	}
	seen := map[int]string{}
	for _, t := range set.Traces {
		if t.Rank == model.NoRank {
			continue
		}
		if other, dup := seen[t.Rank]; dup {
			t.Warn("-", "rank %d also claimed by %s: ranks of this set are ambiguous", t.Rank, other)
		}
		seen[t.Rank] = t.Path
	}
}

// Analyze imports the files of one job and analyses them.
func Analyze(ctx context.Context, paths []string, opts Options) (*model.Report, error) {
	opts.defaults()
	set, err := Load(ctx, paths, opts)
	if err != nil {
		return nil, err
	}
	return AnalyzeSet(set, opts), nil
}

// AnalyzeSet analyses an already imported set.
func AnalyzeSet(set *model.TraceSet, opts Options) *model.Report {
	opts.defaults()
	cfg := opts.Config
	if opts.Steps != nil {
		set.Steps = opts.Steps
	}
	r := &model.Report{ToolName: version.Name, ToolVersion: version.Version, Window: opts.Window, Job: set.Job()}
	for _, t := range set.Traces {
		r.Inputs = append(r.Inputs, model.Input{Path: t.Path, Format: t.Format, Rank: t.Rank, Producer: t.Producer})
		r.Warnings = append(r.Warnings, t.Warnings...)
		r.Health = append(r.Health, health(t))
		if t.Bench != nil {
			r.Bench = append(r.Bench, model.InputBench{Path: t.Path, Rank: t.Rank, Bench: t.Bench})
		}
		if t.JobLog != nil && len(t.JobLog.Stats) > 0 {
			r.JobLogs = append(r.JobLogs, model.InputJobLog{Path: t.Path, Rank: t.Rank, JobLog: t.JobLog})
		}
	}
	// The breakdown, the summary tables and the detectors only read the
	// set: run them side by side.
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Devices, r.Kernels = breakdown.Compute(set, opts.Window)
	}()
	sumDone := make(chan summary.Result, 1)
	go func() { sumDone <- summary.Compute(set) }()
	res := detectors.Run(set, opts.Detectors, cfg)
	<-done
	sum := <-sumDone
	summary.Apply(r.Kernels, sum.Kernels)
	for i := range r.Kernels {
		r.Kernels[i].Op = model.ClassifyOp(r.Kernels[i].Name)
	}
	r.Summary = sum.Summary
	r.Steps, r.StepPhases, r.Ops = steps(set)
	r.Findings = groupAcrossRanks(res.Findings, r.Job)
	r.RankTable = rankTable(set, r)
	r.NotMeasurable = dedupeNM(groupNotMeasurable(res.NotMeasurable, set))
	for _, e := range res.Errors {
		r.Warnings = append(r.Warnings, model.Warning{File: "", Position: "analysis", Message: e.Error()})
	}
	return r
}

func dedupeNM(in []model.NotMeasurable) []model.NotMeasurable {
	seen := map[model.NotMeasurable]bool{}
	var out []model.NotMeasurable
	for _, n := range in {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Rule != out[j].Rule {
			return out[i].Rule < out[j].Rule
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

func health(t *model.Trace) model.InputHealth {
	h := model.InputHealth{Path: t.Path, Capabilities: t.Caps.Names(), Missing: t.Caps.Missing(), Notes: t.Caps.Notes, Warnings: len(t.Warnings)}
	add := func(name string, n int) {
		if n > 0 {
			h.Counts = append(h.Counts, model.Count{Name: name, N: int64(n)})
		}
	}
	add("kernels", len(t.Kernels))
	add("memops", len(t.MemOps))
	add("api_calls", len(t.APICalls))
	add("syncs", len(t.Syncs))
	add("ranges", len(t.Ranges))
	add("os_calls", len(t.OSCalls))
	add("gil", len(t.GIL))
	add("collectives", len(t.Collectives))
	add("counter_samples", len(t.Samples))
	add("memory_events", len(t.MemEvents))
	if t.Bench != nil {
		n := 0
		for _, r := range t.Bench.Runs {
			n += len(r.Rows)
		}
		add("bench_runs", len(t.Bench.Runs))
		add("bench_rows", n)
	}
	return h
}

// steps finds the steps of every trace of the set, their statistics per
// phase, and the kernel time per class per device (and step phase).
func steps(set *model.TraceSet) ([]model.Step, []model.PhaseStats, []model.DeviceOps) {
	var all []model.Step
	var ops []model.DeviceOps
	for _, t := range set.Traces {
		st := set.StepsOf(t)
		all = append(all, st...)
		ops = append(ops, model.OpBreakdown(t, st)...)
	}
	if len(all) == 0 {
		return nil, nil, ops
	}
	return all, model.StepPhases(all), ops
}
