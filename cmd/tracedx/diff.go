package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracedx/tracedx/compare"
	"github.com/tracedx/tracedx/export/diffreport"
	"github.com/tracedx/tracedx/export/html"
	"github.com/tracedx/tracedx/internal/pipeline"
)

// diffOptions are the flags of `tracedx diff`.
type diffOptions struct {
	Base, Candidate []string
	Format          string
	Output          string
	FailPct         float64
	MinOverlap      float64
	Window          string
	InputFormat     string
	Params          []string
	Disable         []string
	MaxWarnings     int
	Steps           string // --steps
}

func newDiffCmd(g *globalOpts, runF func(*diffOptions) error) *cobra.Command {
	opts := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff BASE CANDIDATE",
		Short: "Compare two runs: what got slower and why; a regression gate",
		Long: `Compare a base run with a candidate run of the same job and say what changed:
span, GPU busy and idle time, kernel-gap time and step time; per-kernel time
deltas; per-device compute / communication / memory / idle; findings that are
new in the candidate or resolved since the base.

BASE and CANDIDATE are each one trace file, or the files of one job's ranks as a
comma-separated list (rank0.json,rank1.json). When the two sides look like
different jobs (other devices, few kernel names in common) the output starts
with a "not comparable" warning.

--fail-on-regression PCT exits with code 1 when span, step time or total GPU
busy time grew by more than PCT percent.`,
		Example: `  tracedx diff main.pt.trace.json pr.pt.trace.json
  tracedx diff base/rank0.json,base/rank1.json cand/rank0.json,cand/rank1.json --format md
  tracedx diff base.sqlite cand.sqlite --fail-on-regression 5 --format junit -o diff.xml`,
		Args: exactArgs(2, "BASE and CANDIDATE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Base, opts.Candidate = splitList(args[0]), splitList(args[1])
			if runF != nil {
				return runF(opts)
			}
			return runDiff(g, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Format, "format", "f", "text", "output format: "+strings.Join(diffreport.Formats, ", ")+", html")
	f.StringVarP(&opts.Output, "output", "o", "", "write the diff to FILE (atomically; devices, FIFOs and symlink targets in place; - = stdout)")
	f.Float64Var(&opts.FailPct, "fail-on-regression", 0, "exit 1 when span, step time or GPU busy time grew by more than PCT percent (0 = off)")
	f.Float64Var(&opts.MinOverlap, "min-overlap", compare.DefaultMinOverlap, "kernel-name overlap (Jaccard, 0..1) below which the runs are reported as not comparable")
	f.StringVar(&opts.Window, "window", "trace", "GPU time breakdown definition: trace or hta")
	f.StringVar(&opts.InputFormat, "input-format", "", "force the input format instead of sniffing: kineto, nsys, nccl-tests, joblog")
	f.StringArrayVar(&opts.Params, "param", nil, "override a rule parameter, RULE.PARAM=VALUE (repeatable)")
	f.StringArrayVar(&opts.Disable, "disable", nil, "do not run this rule (repeatable)")
	f.IntVar(&opts.MaxWarnings, "max-warnings", 1000, "import warnings kept per file")
	addStepsFlag(f, &opts.Steps)
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(diffreport.Formats, cobra.ShellCompDirectiveNoFileComp))
	addMaxMemoryFlag(cmd, g)
	return cmd
}

// splitList splits a comma-separated list of paths, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runDiff(g *globalOpts, opts *diffOptions) error {
	okFormat := false
	for _, f := range diffreport.Formats {
		okFormat = okFormat || f == opts.Format
	}
	if !okFormat && opts.Format != "markdown" && opts.Format != "html" {
		return usageError("--format %q: want one of %s, html", opts.Format, strings.Join(diffreport.Formats, ", "))
	}
	if !(opts.FailPct >= 0) || math.IsInf(opts.FailPct, 0) { // NaN fails every comparison
		return usageError("--fail-on-regression %g: want a percentage >= 0", opts.FailPct)
	}
	if !(opts.MinOverlap >= 0 && opts.MinOverlap <= 1) {
		return usageError("--min-overlap %g: want a fraction between 0 and 1", opts.MinOverlap)
	}
	if err := pipeline.CheckWindow(opts.Window); err != nil {
		return usageError("%v", err)
	}
	if len(opts.Base) == 0 || len(opts.Candidate) == 0 {
		return usageError("diff: want BASE and CANDIDATE (files, or comma-separated lists of rank files)")
	}
	if err := g.checkInputs(append(append([]string{}, opts.Base...), opts.Candidate...), ""); err != nil {
		return err
	}
	cfg, err := detectorConfig(opts.Params, opts.Disable)
	if err != nil {
		return err
	}
	popts := pipeline.Options{Format: opts.InputFormat, Window: opts.Window, Config: cfg}
	steps, err := stepParser(opts.Steps)
	if err != nil {
		return err
	}
	popts.Steps = steps
	popts.Import.MaxWarnings = opts.MaxWarnings
	side := func(paths []string) (compare.Side, error) {
		set, err := pipeline.Load(g.Ctx, paths, popts)
		if err != nil {
			return compare.Side{}, err
		}
		return compare.Side{Report: pipeline.AnalyzeSet(set, popts), Set: set}, nil
	}
	base, err := side(opts.Base)
	if err != nil {
		return err
	}
	cand, err := side(opts.Candidate)
	if err != nil {
		return err
	}
	minOverlap := opts.MinOverlap
	if minOverlap == 0 {
		minOverlap = -1 // 0 turns the check off
	}
	res := compare.Compare(base, cand, compare.Options{MinOverlap: minOverlap, FailPct: opts.FailPct})
	write := func(w io.Writer) error { return diffreport.Render(w, res, opts.Format) }
	if opts.Format == "html" {
		write = func(w io.Writer) error { return html.DiffReports(w, res, base.Report, cand.Report) }
	}
	if err := g.writeOutput(opts.Output, write); err != nil {
		return err
	}
	if !res.Comparable && opts.Format != "text" && opts.Format != "md" && opts.Format != "markdown" {
		fmt.Fprintf(g.Stderr, "tracedx: warning: not comparable: %s\n", strings.Join(res.Problems, "; "))
	}
	if res.Regressed() {
		var parts []string
		for _, r := range res.Regressions {
			parts = append(parts, fmt.Sprintf("%s %+.1f%%", r.Quantity, r.Pct))
		}
		return gateFailed(fmt.Sprintf("regression beyond --fail-on-regression %g%%: %s", opts.FailPct, strings.Join(parts, ", ")))
	}
	return nil
}
