package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracedx/tracedx/detectors"
	detall "github.com/tracedx/tracedx/detectors/all"
	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/internal/pipeline"
	"github.com/tracedx/tracedx/model"
	"github.com/tracedx/tracedx/policy"
)

// analyzeOptions are the flags of `tracedx analyze`.
type analyzeOptions struct {
	Files       []string
	Format      string // report format
	Output      string
	FailOn      string
	Window      string
	InputFormat string
	Params      []string // rule.param=value
	Disable     []string
	MaxWarnings int
	Steps       string // --steps
	Detail      string // --detail: ticket or full
	// MaxNameBytes is --max-name-bytes (0: no cap).
	MaxNameBytes int
	// Hooks let other parts of the CLI (the policy file) adjust the run and
	// gate the report; each may be nil.
	Configure []func(cfg *detectors.Config) error
	Gate      []func(r *model.Report) error

	policy *policy.Policy // set by --policy
}

// analyzeFormats are report formats rendered by the CLI itself rather than by
// package export (they need the policy and the rule list).
var analyzeFormats = map[string]func(opts *analyzeOptions, w io.Writer, r *model.Report) error{
	"junit": renderJUnit,
}

// reportFormats lists every --format value of analyze.
func reportFormats() []string {
	fs := append([]string(nil), export.Formats...)
	for f := range analyzeFormats {
		fs = append(fs, f)
	}
	sort.Strings(fs[len(export.Formats):])
	return fs
}

func newAnalyzeCmd(g *globalOpts, runF func(*analyzeOptions) error) *cobra.Command {
	opts := &analyzeOptions{}
	cmd := &cobra.Command{
		Use:   "analyze FILE...",
		Short: "Analyse one trace, or the traces of one job (one file per rank)",
		Long: `Analyse one trace, or several files of one job (ranks), and write a report.

Inputs are sniffed by content (gzip, SQLite, JSON, log lines); --input-format
overrides it. The default report is a terminal summary; --format md gives a
ticket-ready Markdown report and --format json the versioned JSON report.`,
		Example: `  tracedx analyze trace.pt.trace.json.gz
  tracedx analyze rank*.json --format md -o report.md
  tracedx analyze run.sqlite --format json --fail-on warning
  tracedx analyze trace.json --window hta --param kernel-gap.min_gap_us=100`,
		Args: minArgs(1, "at least one input FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return runAnalyze(g, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Format, "format", "f", "text", "report format: "+strings.Join(reportFormats(), ", "))
	f.StringVarP(&opts.Output, "output", "o", "", "write the report to FILE (atomically; devices, FIFOs and symlink targets are written in place; - = stdout)")
	f.StringVar(&opts.FailOn, "fail-on", "none", "exit 1 when a finding is at or above this severity: info, warning, error, none")
	f.StringVar(&opts.Window, "window", "trace", "GPU time breakdown definition: trace (whole trace) or hta (Holistic Trace Analysis)")
	f.StringVar(&opts.InputFormat, "input-format", "", "force the input format instead of sniffing: kineto, nsys, nccl-tests, joblog")
	f.StringArrayVar(&opts.Params, "param", nil, "override a rule parameter, RULE.PARAM=VALUE (repeatable; see 'tracedx rules explain RULE')")
	f.StringArrayVar(&opts.Disable, "disable", nil, "do not run this rule (repeatable)")
	f.IntVar(&opts.MaxWarnings, "max-warnings", 1000, "import warnings kept per file")
	addStepsFlag(f, &opts.Steps)
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(reportFormats(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"info", "warning", "error", "none"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("window", cobra.FixedCompletions([]string{"trace", "hta"}, cobra.ShellCompDirectiveNoFileComp))
	addPolicyFlags(g, cmd, opts)
	addRenderFlags(cmd, opts)
	addMaxMemoryFlag(cmd, g)
	return cmd
}

// detectorConfig builds the detector configuration from --param and --disable.
func detectorConfig(params, disable []string) (detectors.Config, error) {
	cfg := detectors.Config{Params: map[string]map[string]float64{}, Disabled: map[string]bool{}}
	for _, id := range disable {
		if _, ok := detall.ByID(id); !ok {
			return cfg, usageError("--disable %s: unknown rule (see 'tracedx rules')", id)
		}
		cfg.Disabled[id] = true
	}
	for _, p := range params {
		key, val, ok := strings.Cut(p, "=")
		rule, name, ok2 := strings.Cut(key, ".")
		if !ok || !ok2 {
			return cfg, usageError("--param %q: want RULE.PARAM=VALUE", p)
		}
		d, found := detall.ByID(rule)
		if !found {
			return cfg, usageError("--param %q: unknown rule %s (see 'tracedx rules')", p, rule)
		}
		var declared *detectors.Param
		for i, dp := range d.Params {
			if dp.Name == name {
				declared = &d.Params[i]
			}
		}
		if declared == nil {
			return cfg, usageError("--param %q: rule %s has no parameter %s (see 'tracedx rules explain %s')", p, rule, name, rule)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return cfg, usageError("--param %q: %s is not a number", p, val)
		}
		if err := policy.CheckParamValue(*declared, v); err != nil {
			return cfg, usageError("--param %q: %v", p, err)
		}
		if cfg.Params[rule] == nil {
			cfg.Params[rule] = map[string]float64{}
		}
		cfg.Params[rule][name] = v
	}
	return cfg, nil
}

// parseFailOn returns the gating severity, or ok=false for "none".
func parseFailOn(s string) (model.Severity, bool, error) {
	if s == "" || strings.EqualFold(s, "none") {
		return 0, false, nil
	}
	sev, err := model.ParseSeverity(s)
	if err != nil {
		return 0, false, usageError("--fail-on: %v", err)
	}
	return sev, true, nil
}

func checkFormat(format string) error {
	for _, f := range reportFormats() {
		if f == format {
			return nil
		}
	}
	if format == "markdown" {
		return nil
	}
	return usageError("--format %q: want one of %s", format, strings.Join(reportFormats(), ", "))
}

func runAnalyze(g *globalOpts, opts *analyzeOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	failSev, gate, err := parseFailOn(opts.FailOn)
	if err != nil {
		return err
	}
	if err := pipeline.CheckWindow(opts.Window); err != nil {
		return usageError("%v", err)
	}
	cfg, err := detectorConfig(opts.Params, opts.Disable)
	if err != nil {
		return err
	}
	for _, hook := range opts.Configure {
		if err := hook(&cfg); err != nil {
			return err
		}
	}
	if err := g.checkInputs(opts.Files, " (use 'tracedx batch' for many traces)"); err != nil {
		return err
	}
	renderOpts, err := opts.renderOptions()
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
	rep, err := pipeline.Analyze(g.Ctx, opts.Files, popts)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error { return export.RenderOpts(w, rep, opts.Format, renderOpts) }
	if render, ok := analyzeFormats[opts.Format]; ok {
		write = func(w io.Writer) error { return render(opts, w, rep) }
	}
	if err := g.writeOutput(opts.Output, write); err != nil {
		return err
	}
	for _, hook := range opts.Gate {
		if err := hook(rep); err != nil {
			return err
		}
	}
	if gate {
		n := 0
		for _, f := range rep.Findings {
			if f.Severity >= failSev {
				n++
			}
		}
		if n > 0 {
			return gateFailed(fmt.Sprintf("%d finding(s) at or above --fail-on %s", n, failSev))
		}
	}
	return nil
}

// checkInputs checks that every input exists, is not a folder ("-" is
// standard input) and fits in the memory limit; hint is added to the
// folder message.
func (g *globalOpts) checkInputs(files []string, hint string) error {
	for _, f := range files {
		if f == "-" {
			continue
		}
		if st, err := os.Stat(f); err != nil {
			return usageError("%s: %v", f, unwrapPathError(err))
		} else if st.IsDir() {
			return usageError("%s: is a directory%s", f, hint)
		}
	}
	if err := g.Mem.checkFits(files); err != nil {
		return err
	}
	budget := memBudget(files)
	if err := g.checkMax(files, budget); err != nil {
		return err
	}
	g.startMemBudget(files, budget)
	return nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
