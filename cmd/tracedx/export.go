package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracedx/tracedx/export/parquet"
	"github.com/tracedx/tracedx/export/perfetto"
	"github.com/tracedx/tracedx/export/timeline"
	"github.com/tracedx/tracedx/internal/pipeline"
	"github.com/tracedx/tracedx/model"
)

// exportOptions are the flags of `tracedx export`.
type exportOptions struct {
	Files       []string
	To          string
	Output      string
	Around      string
	Pad         string // a Go duration; "" = the default padding
	Range       string // START_NS:END_NS
	InputFormat string
	NoFindings  bool
	NoFlows     bool
	Absolute    bool
	MaxWarnings int
	// MaxNameBytes is --max-name-bytes (0: no cap).
	MaxNameBytes int
}

var exportTargets = []string{"parquet", "arrow", "perfetto"}

func newExportCmd(g *globalOpts, runF func(*exportOptions) error) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export FILE... --to parquet|arrow|perfetto -o OUT",
		Short: "Write the normalized timeline for other tools (Parquet, Arrow, Perfetto)",
		Long: `Write the normalized timeline of a trace (or of the traces of one job, one
file per rank) for other tools.

  --to parquet|arrow   OUT is a directory; one file per table (kernels, memops,
                       api_calls, ranges, collectives, counters, syncs, os_calls,
                       gil, memory), see docs/timeline.md.
  --to perfetto        OUT is a Chrome trace-event JSON file that ui.perfetto.dev
                       and chrome://tracing open, with tracedx's findings drawn on
                       a "tracedx findings" track (-o - or no -o: stdout;
                       -o NAME.json.gz: gzip-compressed).

--around RULE[#N][@E] keeps only the events around a finding's evidence (the
N-th finding of RULE, its E-th evidence window, padded by --pad), small enough
to attach to a ticket; --range START_NS:END_NS picks the time range by hand.`,
		Example: `  tracedx export trace.json.gz --to parquet -o timeline/
  tracedx export run.sqlite --to perfetto -o run.perfetto.json
  tracedx export trace.json.gz --to perfetto -o trace.perfetto.json.gz
  tracedx export trace.json --to perfetto --around kernel-gap -o gap.json
  tracedx export trace.json --to arrow --range 1700000000000000000:1700000000050000000 -o slice/`,
		Args: minArgs(1, "at least one input FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return runExport(g, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.To, "to", "", "output format: "+strings.Join(exportTargets, ", ")+" (required)")
	f.StringVarP(&opts.Output, "output", "o", "", "output directory (parquet, arrow) or file (perfetto; - for stdout)")
	f.StringVar(&opts.Around, "around", "", "keep only events around a finding: RULE, RULE#N (N-th finding of RULE) or RULE#N@E (its E-th evidence)")
	f.StringVar(&opts.Pad, "pad", "", "padding on each side of the --around evidence window, e.g. 2ms (default: half its length, at least 100µs)")
	f.StringVar(&opts.Range, "range", "", "keep only events intersecting START_NS:END_NS (on the trace clock)")
	// --window was this flag's name before --window came to mean the
	// breakdown definition everywhere else; kept as a hidden alias.
	f.StringVar(&opts.Range, "window", "", "deprecated spelling of --range")
	_ = f.MarkHidden("window")
	_ = f.MarkDeprecated("window", "use --range START_NS:END_NS")
	f.StringVar(&opts.InputFormat, "input-format", "", "force the input format instead of sniffing: kineto, nsys, nccl-tests, joblog")
	f.BoolVar(&opts.NoFindings, "no-findings", false, "perfetto: do not run the detectors nor draw findings")
	f.BoolVar(&opts.NoFlows, "no-flows", false, "perfetto: leave out launch → kernel flow arrows")
	f.BoolVar(&opts.Absolute, "absolute-time", false, "perfetto: keep epoch-scale timestamps instead of writing them relative to a whole-second origin")
	f.IntVar(&opts.MaxWarnings, "max-warnings", 1000, "import warnings kept per file")
	addMaxNameFlag(cmd, &opts.MaxNameBytes)
	_ = cmd.RegisterFlagCompletionFunc("to", cobra.FixedCompletions(exportTargets, cobra.ShellCompDirectiveNoFileComp))
	addMaxMemoryFlag(cmd, g)
	return cmd
}

func runExport(g *globalOpts, opts *exportOptions) error {
	switch opts.To {
	case "parquet", "arrow", "perfetto":
	case "":
		return usageError("export: --to is required (%s)", strings.Join(exportTargets, ", "))
	default:
		return usageError("--to %q: want one of %s", opts.To, strings.Join(exportTargets, ", "))
	}
	maxName, err := nameCap(opts.MaxNameBytes)
	if err != nil {
		return err
	}
	if opts.To != "perfetto" && (opts.Output == "" || opts.Output == "-") {
		return usageError("export --to %s: -o DIR is required (one file per table is written there)", opts.To)
	}
	if opts.Around != "" && opts.Range != "" {
		return usageError("export: give --around or --range, not both")
	}
	var win *model.Interval
	if opts.Range != "" {
		iv, err := timeline.ParseRange(opts.Range)
		if err != nil {
			return usageError("--range: %v", err)
		}
		win = &iv
	}
	if st, err := os.Stat(opts.Output); err == nil && opts.To != "perfetto" && !st.IsDir() {
		return usageError("-o %s: exists and is not a directory", opts.Output)
	}
	if err := g.checkInputs(opts.Files, ""); err != nil {
		return err
	}
	popts := pipeline.Options{Format: opts.InputFormat}
	popts.Import.MaxWarnings = opts.MaxWarnings
	set, err := pipeline.Load(g.Ctx, opts.Files, popts)
	if err != nil {
		return err
	}
	var findings []model.Finding
	if opts.Around != "" || (opts.To == "perfetto" && !opts.NoFindings) {
		findings = pipeline.AnalyzeSet(set, popts).Findings
	}
	if opts.Around != "" {
		pad := model.Duration(-1)
		if opts.Pad != "" {
			d, err := time.ParseDuration(opts.Pad)
			if err != nil || d < 0 {
				return usageError("--pad %q: want a duration such as 500us or 2ms", opts.Pad)
			}
			pad = model.Duration(d)
		}
		iv, f, err := timeline.AroundFinding(set, findings, opts.Around, pad)
		if err != nil {
			return usageError("%v", err)
		}
		win = &iv
		g.info("export: window %d:%d ns (%s) around %s: %s", iv.Start, iv.End, iv.Len(), opts.Around, f.Title)
	}

	if opts.To == "perfetto" {
		write := func(w io.Writer) error {
			return perfetto.Write(w, set, perfetto.Options{Range: win, Findings: findings, NoFlows: opts.NoFlows, Absolute: opts.Absolute,
				Gzip: strings.HasSuffix(opts.Output, ".gz"), MaxNameBytes: maxName})
		}
		if err := g.writeOutput(opts.Output, write); err != nil {
			return err
		}
		if opts.Output == "" || opts.Output == "-" {
			return nil
		}
		if st, err := os.Stat(opts.Output); err == nil && st.Mode().IsRegular() {
			g.info("export: wrote %s (%d bytes)", opts.Output, st.Size())
		}
		return nil
	}
	format := timeline.Parquet
	if opts.To == "arrow" {
		format = timeline.Arrow
	}
	files, err := timeline.WriteDir(g.Ctx, opts.Output, set, format, timeline.Options{Range: win})
	if err != nil {
		return err
	}
	for _, f := range files {
		g.info("export: wrote %s (%d rows)", f.Path, f.Rows)
	}
	if format == timeline.Parquet && win == nil { // summary tables of the whole capture
		paths, err := parquet.WriteSummary(filepath.Join(opts.Output, "summary"), strings.Join(opts.Files, ","), pipeline.AnalyzeSet(set, popts))
		if err != nil {
			return err
		}
		g.info("export: wrote %d summary tables in %s", len(paths), filepath.Join(opts.Output, "summary"))
	}
	return nil
}
