package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tracedx/tracedx/detectors"
	detall "github.com/tracedx/tracedx/detectors/all"
	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/export/junit"
	"github.com/tracedx/tracedx/export/parquet"
	impall "github.com/tracedx/tracedx/importers/all"
	"github.com/tracedx/tracedx/internal/batch"
	"github.com/tracedx/tracedx/internal/pipeline"
	"github.com/tracedx/tracedx/internal/version"
	"github.com/tracedx/tracedx/model"
	"github.com/tracedx/tracedx/policy"
)

// batchOptions are the flags of `tracedx batch`.
type batchOptions struct {
	Inputs      []string
	Manifests   []string
	Out         string
	Jobs        int
	Shard       string
	Policy      string
	FailOn      string
	Window      string
	InputFormat string
	Params      []string
	Disable     []string
	MaxWarnings int
	Steps       string // --steps
	Force       bool
	Fsync       bool
	// ReportFormat lists the report formats written per input (md,json,html).
	ReportFormat string
}

func newBatchCmd(g *globalOpts, runF func(*batchOptions) error) *cobra.Command {
	opts := &batchOptions{}
	cmd := &cobra.Command{
		Use:   "batch INPUTS... --out DIR",
		Short: "Analyse many traces in parallel into per-trace reports and a Parquet dataset",
		Long: `Analyse many traces, each on its own, on a pool of workers.

INPUTS are files, folders (searched recursively; files whose format is
recognised by content are kept, hidden files are skipped) and manifests
(@list.txt or --manifest FILE: one path per line, # comments, paths relative
to the manifest's folder).

Writes, under --out DIR:
  reports/<name>.md, reports/<name>.json   one report per input in each
                                           --report-format (md, json, html)
  dataset/{inputs,metrics,findings,kernels}[-shard-i-of-n].parquet
  junit[-shard-i-of-n].xml                 one test suite per input
  state/                                   what is done (for resuming)

A failed input is recorded (status=error) and never stops the rest. Every
file is written atomically and finished inputs are remembered by the sha256
of their bytes, so a rerun (after a kill, or with new inputs) only does what
is left. --shard i/n keeps the inputs whose name hashes to shard i, so that
a Kubernetes Indexed Job, a Slurm array or a CI matrix can split the work;
DuckDB reads the union: read_parquet('DIR/dataset/findings*.parquet').

Exit codes: 2 when an input could not be read, else 1 when an input failed
a --policy gate or has findings at or above --fail-on, else 0.`,
		Example: `  tracedx batch traces/ --out out
  tracedx batch @runs.txt --out out --policy policy.yaml --jobs 8
  tracedx batch traces/ --out out --report-format md,json,html
  tracedx batch /data/traces --out /data/out --shard $JOB_COMPLETION_INDEX/16`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && len(opts.Manifests) == 0 {
				return usageError("%s: missing INPUTS (files, folders or @manifest; see '%s --help')", cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Inputs = args
			if runF != nil {
				return runF(opts)
			}
			return runBatch(g, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Out, "out", "o", "", "output folder (required)")
	f.StringArrayVar(&opts.Manifests, "manifest", nil, "read input paths from FILE, one per line (repeatable)")
	f.IntVarP(&opts.Jobs, "jobs", "j", 0, "inputs analysed at once, one trace in memory each (0 = the number of CPUs)")
	f.StringVar(&opts.Shard, "shard", "", "process only shard i of n (i/n, 0-based), e.g. 0/3")
	f.StringVar(&opts.Policy, "policy", "", "policy file (YAML): rule settings and gate conditions (see docs/policy.md)")
	f.StringVar(&opts.FailOn, "fail-on", "none", "an input fails when a finding is at or above this severity: info, warning, error, none")
	f.StringVar(&opts.Window, "window", "trace", "GPU time breakdown definition: trace or hta")
	f.StringVar(&opts.InputFormat, "input-format", "", "force the input format instead of sniffing: kineto, nsys, nccl-tests, joblog")
	f.StringArrayVar(&opts.Params, "param", nil, "override a rule parameter, RULE.PARAM=VALUE (repeatable)")
	f.StringArrayVar(&opts.Disable, "disable", nil, "do not run this rule (repeatable)")
	f.IntVar(&opts.MaxWarnings, "max-warnings", 1000, "import warnings kept per file")
	f.StringVar(&opts.ReportFormat, "report-format", "md,json", "report formats written per input, comma-separated: "+strings.Join(batchReportFormats, ", "))
	addStepsFlag(f, &opts.Steps)
	f.BoolVar(&opts.Force, "force", false, "redo every input, even those done by an earlier run")
	f.BoolVar(&opts.Fsync, "fsync", true, "fsync each per-input file before renaming it (--fsync=false: faster; still atomic after a kill, not after a power loss)")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"info", "warning", "error", "none"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("window", cobra.FixedCompletions([]string{"trace", "hta"}, cobra.ShellCompDirectiveNoFileComp))
	addMaxMemoryFlag(cmd, g)
	return cmd
}

func runBatch(g *globalOpts, opts *batchOptions) error {
	a, err := checkBatchOptions(opts)
	if err != nil {
		return err
	}
	cfg, pol, policyBytes, err := batchDetectorConfig(opts)
	if err != nil {
		return err
	}
	items, err := expandBatchInputs(opts)
	if err != nil {
		return err
	}
	bc, err := newBatchConfig(g, opts, a, items, cfg, pol, policyBytes)
	if err != nil {
		return err
	}
	if f, ok := g.Stderr.(*os.File); ok && g.StderrIsTTY {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			bc.Width = w
		}
	}
	sum, err := batch.Run(g.Ctx, bc)
	return batchOutcome(g, opts, sum, err)
}

// batchArgs are the batch options parsed from their text.
type batchArgs struct {
	formats       []string
	shard, shards int
	failSev       model.Severity
}

// checkBatchOptions checks and parses the options (usage errors first),
// setting --jobs 0 to the number of CPUs.
func checkBatchOptions(opts *batchOptions) (batchArgs, error) {
	if opts.Out == "" {
		return batchArgs{}, usageError("batch: --out DIR is required")
	}
	if opts.Jobs < 0 {
		return batchArgs{}, usageError("--jobs %d: want 0 (the number of CPUs) or more", opts.Jobs)
	}
	if opts.Jobs == 0 {
		opts.Jobs = runtime.NumCPU()
	}
	var a batchArgs
	var err error
	a.formats, err = parseReportFormats(opts.ReportFormat)
	if err != nil {
		return batchArgs{}, err
	}
	a.shard, a.shards, err = batch.ParseShard(opts.Shard)
	if err != nil {
		return batchArgs{}, usageError("%v", err)
	}
	var gate bool
	a.failSev, gate, err = parseFailOn(opts.FailOn)
	if err != nil {
		return batchArgs{}, err
	}
	if !gate {
		a.failSev = junit.Never
	}
	if err := pipeline.CheckWindow(opts.Window); err != nil {
		return batchArgs{}, usageError("%v", err)
	}
	if opts.InputFormat != "" {
		if _, ok := impall.Registry().ByFormat(opts.InputFormat); !ok {
			return batchArgs{}, usageError("--input-format %q: want one of %s", opts.InputFormat, strings.Join(impall.Registry().Formats(), ", "))
		}
	}
	return a, nil
}

// batchDetectorConfig is the detector configuration of --param/--disable
// over the --policy file's, with the policy and its bytes (for the
// fingerprint).
func batchDetectorConfig(opts *batchOptions) (detectors.Config, *policy.Policy, []byte, error) {
	flagCfg, err := detectorConfig(opts.Params, opts.Disable)
	if err != nil {
		return detectors.Config{}, nil, nil, err
	}
	var pol *policy.Policy
	var policyBytes []byte
	if opts.Policy != "" {
		if pol, err = policy.Load(opts.Policy); err != nil {
			return detectors.Config{}, nil, nil, usageError("%v", err)
		}
		if err := pol.Check(detall.Detectors()); err != nil {
			return detectors.Config{}, nil, nil, usageError("%v", err)
		}
		policyBytes, _ = os.ReadFile(opts.Policy)
	}
	return mergeConfig(pol.DetectorConfig(), flagCfg), pol, policyBytes, nil
}

// expandBatchInputs lists the inputs of the arguments and manifests that an
// importer recognises; none is a usage error.
func expandBatchInputs(opts *batchOptions) ([]batch.Item, error) {
	reg := impall.Registry()
	detect := func(path string) bool {
		_, err := reg.Detect(path)
		return err == nil
	}
	items, err := batch.Expand(opts.Inputs, opts.Manifests, detect, batch.OutputDirs(opts.Out)...)
	if err != nil {
		return nil, usageError("%v", err)
	}
	if len(items) == 0 {
		return nil, usageError("batch: no inputs found in %s", strings.Join(append(opts.Inputs, opts.Manifests...), ", "))
	}
	return items, nil
}

// newBatchConfig is the batch run: the enabled rules, the fingerprint of
// everything that changes a report, and one pipeline analysis per input.
func newBatchConfig(g *globalOpts, opts *batchOptions, a batchArgs, items []batch.Item, cfg detectors.Config, pol *policy.Policy, policyBytes []byte) (batch.Config, error) {
	popts := pipeline.Options{Format: opts.InputFormat, Window: opts.Window, Config: cfg, Jobs: 1}
	steps, err := stepParser(opts.Steps)
	if err != nil {
		return batch.Config{}, err
	}
	popts.Steps = steps
	popts.Import.MaxWarnings = opts.MaxWarnings
	var rules []string
	for _, d := range detall.Detectors() {
		if !cfg.Disabled[d.ID] {
			rules = append(rules, d.ID)
		}
	}
	bc := batch.Config{
		Items:  items,
		Out:    opts.Out,
		Jobs:   opts.Jobs,
		Shard:  a.shard,
		Shards: a.shards,
		Policy: pol,
		FailOn: a.failSev,
		Rules:  rules,
		Fingerprint: fingerprint(version.Version, parquet.DatasetVersion, opts.Window, opts.InputFormat, opts.FailOn,
			fmt.Sprint(opts.MaxWarnings), configText(cfg), string(policyBytes)),
		Force:   opts.Force,
		NoSync:  !opts.Fsync,
		Formats: a.formats,
		Analyze: func(ctx context.Context, path string) (*model.Report, error) {
			if err := g.Mem.checkFits([]string{path}); err != nil {
				return nil, err
			}
			if g.MaxMemory > 0 {
				if err := g.checkMax([]string{path}, memBudget([]string{path})); err != nil {
					return nil, err
				}
			}
			return pipeline.Analyze(ctx, []string{path}, popts)
		},
		Render:   export.Render,
		Progress: g.progress(),
		TTY:      g.StderrIsTTY,
	}
	return bc, nil
}

// batchOutcome prints the summary and where the outputs are, and turns an
// interrupt, unreadable inputs or failed gates into the exit status.
func batchOutcome(g *globalOpts, opts *batchOptions, sum *batch.Summary, err error) error {
	if errors.Is(err, context.Canceled) {
		done := 0
		if sum != nil {
			done = sum.Count(func(r *batch.Result) bool { return r.Status != "" })
		}
		return &exitError{code: exitInput, err: fmt.Errorf("interrupted after %d inputs; run the same command again to resume", done)}
	}
	if sum != nil && len(sum.Results) > 0 {
		if werr := batch.WriteSummary(g.Stdout, sum); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(g.Stdout, "reports: %s/reports/  dataset: %s/dataset/  junit: %s\n", opts.Out, opts.Out, sum.JUnitFile)
	unreadable := sum.Count(func(r *batch.Result) bool { return r.Status != parquet.StatusOK })
	failed := sum.Count(func(r *batch.Result) bool { return r.Status == parquet.StatusOK && r.Failed() })
	switch {
	case unreadable > 0:
		return &exitError{code: exitInput, err: fmt.Errorf("%d of %d inputs could not be read", unreadable, len(sum.Results))}
	case failed > 0:
		return gateFailed(fmt.Sprintf("%d of %d inputs failed a gate", failed, len(sum.Results)))
	}
	return nil
}

// batchReportFormats are the --report-format values; each is also the
// report's file extension.
var batchReportFormats = []string{"md", "json", "html"}

// parseReportFormats checks a comma-separated --report-format list
// ("markdown" is md) and returns it without repeats, in the given order.
func parseReportFormats(list string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(list, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "markdown" {
			f = "md"
		}
		if !slices.Contains(batchReportFormats, f) {
			return nil, usageError("--report-format %q: want a comma-separated list of %s", list, strings.Join(batchReportFormats, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// mergeConfig overlays the command-line settings on the policy's.
func mergeConfig(base, over detectors.Config) detectors.Config {
	for id := range over.Disabled {
		base.Disabled[id] = true
	}
	for id, ps := range over.Params {
		if base.Params[id] == nil {
			base.Params[id] = map[string]float64{}
		}
		for k, v := range ps {
			base.Params[id][k] = v
		}
	}
	return base
}

// configText renders a detector configuration deterministically.
func configText(cfg detectors.Config) string {
	var lines []string
	for id := range cfg.Disabled {
		lines = append(lines, "disable "+id)
	}
	for id, ps := range cfg.Params {
		for k, v := range ps {
			lines = append(lines, fmt.Sprintf("param %s.%s=%v", id, k, v))
		}
	}
	for id, s := range cfg.Severity {
		lines = append(lines, fmt.Sprintf("severity %s=%s", id, s))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// fingerprint hashes the settings that shape a batch's outputs.
func fingerprint(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
