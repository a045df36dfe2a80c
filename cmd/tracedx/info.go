package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracedx/tracedx/internal/pipeline"
	"github.com/tracedx/tracedx/model"
)

// infoOptions are the flags of `tracedx info`.
type infoOptions struct {
	File        string
	Validate    bool
	Dump        bool
	Format      string
	InputFormat string
}

func newInfoCmd(g *globalOpts, runF func(*infoOptions) error) *cobra.Command {
	opts := &infoOptions{}
	cmd := &cobra.Command{
		Use:   "info FILE",
		Short: "Show what a trace holds: format, producer, counts, capabilities, warnings",
		Example: `  tracedx info trace.pt.trace.json.gz
  tracedx info run.sqlite --validate
  tracedx info trace.json --dump > model.txt`,
		Args: exactArgs(1, "exactly one input FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runInfo(g, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Validate, "validate", false, "check the imported model's invariants; exit 2 if they do not hold")
	cmd.Flags().BoolVar(&opts.Dump, "dump", false, "print the canonical text dump of the imported model")
	cmd.Flags().StringVarP(&opts.Format, "format", "f", "text", "summary format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	// --json was the first spelling; kept, hidden, as --format json.
	var asJSON bool
	cmd.Flags().BoolVar(&asJSON, "json", false, "same as --format json")
	_ = cmd.Flags().MarkHidden("json")
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if asJSON {
			opts.Format = "json"
		}
		if opts.Format != "text" && opts.Format != "json" {
			return usageError("--format %q: want text or json", opts.Format)
		}
		return nil
	}
	cmd.Flags().StringVar(&opts.InputFormat, "input-format", "", "force the input format instead of sniffing")
	addMaxMemoryFlag(cmd, g)
	return cmd
}

type infoJSON struct {
	Path         string            `json:"path"`
	Format       string            `json:"format"`
	Producer     string            `json:"producer"`
	Rank         int               `json:"rank"`
	WorldSize    int               `json:"world_size"`
	Capabilities []string          `json:"capabilities"`
	Missing      []string          `json:"missing"`
	Notes        []string          `json:"notes"`
	Counts       map[string]int64  `json:"counts"`
	Devices      []string          `json:"devices"`
	Meta         map[string]string `json:"meta"`
	Warnings     []string          `json:"warnings"`
	Valid        *bool             `json:"valid,omitempty"`
	Problems     string            `json:"problems,omitempty"`
}

func runInfo(g *globalOpts, opts *infoOptions) error {
	if err := g.checkInputs([]string{opts.File}, ""); err != nil {
		return err
	}
	set, err := pipeline.Load(g.Ctx, []string{opts.File}, pipeline.Options{Format: opts.InputFormat})
	if err != nil {
		return err
	}
	t := set.Traces[0]
	if opts.Dump {
		if err := t.Dump(g.Stdout); err != nil {
			return err
		}
	}
	var vErr error
	if opts.Validate {
		vErr = t.Validate()
	}
	if !opts.Dump {
		if opts.Format == "json" {
			if err := infoAsJSON(g, t, opts.Validate, vErr); err != nil {
				return err
			}
		} else {
			infoAsText(g, t, opts.Validate, vErr)
		}
	}
	if vErr != nil {
		return &exitError{code: exitInput, err: fmt.Errorf("%s: the imported model is invalid: %s", opts.File, strings.ReplaceAll(vErr.Error(), "\n", "; "))}
	}
	return nil
}

func traceCounts(t *model.Trace) []model.Count {
	c := []model.Count{
		{Name: "devices", N: int64(len(t.Devices))},
		{Name: "threads", N: int64(len(t.Threads))},
		{Name: "kernels", N: int64(len(t.Kernels))},
		{Name: "memops", N: int64(len(t.MemOps))},
		{Name: "api_calls", N: int64(len(t.APICalls))},
		{Name: "syncs", N: int64(len(t.Syncs))},
		{Name: "ranges", N: int64(len(t.Ranges))},
		{Name: "os_calls", N: int64(len(t.OSCalls))},
		{Name: "gil_intervals", N: int64(len(t.GIL))},
		{Name: "collectives", N: int64(len(t.Collectives))},
		{Name: "counter_series", N: int64(len(t.Counters))},
		{Name: "counter_samples", N: int64(len(t.Samples))},
		{Name: "memory_events", N: int64(len(t.MemEvents))},
	}
	if t.Bench != nil {
		rows := 0
		for _, r := range t.Bench.Runs {
			rows += len(r.Rows)
		}
		c = append(c, model.Count{Name: "bench_runs", N: int64(len(t.Bench.Runs))}, model.Count{Name: "bench_rows", N: int64(rows)})
	}
	return c
}

func deviceLines(t *model.Trace) []string {
	var out []string
	for _, d := range t.Devices {
		s := fmt.Sprintf("%d: %s (%s", d.ID, orDash(d.Name), d.Kind)
		if d.SMs > 0 {
			s += fmt.Sprintf(", %d SMs", d.SMs)
		}
		if d.MemoryBytes > 0 {
			s += fmt.Sprintf(", %.1f GiB", float64(d.MemoryBytes)/(1<<30))
		}
		out = append(out, s+")")
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func infoAsText(g *globalOpts, t *model.Trace, validated bool, vErr error) {
	w := bufio.NewWriter(g.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "file:         %s\n", t.Path)
	fmt.Fprintf(w, "format:       %s\n", t.Format)
	fmt.Fprintf(w, "producer:     %s\n", orDash(t.Producer))
	rank := "-"
	if t.Rank != model.NoRank {
		rank = fmt.Sprint(t.Rank)
		if t.WorldSize > 0 {
			rank += fmt.Sprintf(" of %d", t.WorldSize)
		}
	}
	fmt.Fprintf(w, "rank:         %s\n", rank)
	if t.Capture.End > t.Capture.Start {
		fmt.Fprintf(w, "window:       %s\n", model.Duration(t.Capture.End-t.Capture.Start))
	}
	fmt.Fprintf(w, "capabilities: %s\n", orDash(strings.Join(t.Caps.Names(), ", ")))
	fmt.Fprintf(w, "missing:      %s\n", orDash(strings.Join(t.Caps.Missing(), ", ")))
	for _, n := range t.Caps.Notes {
		fmt.Fprintf(w, "note:         %s\n", n)
	}
	for _, d := range deviceLines(t) {
		fmt.Fprintf(w, "device:       %s\n", d)
	}
	fmt.Fprintf(w, "counts:\n")
	for _, c := range traceCounts(t) {
		fmt.Fprintf(w, "  %-16s %d\n", c.Name, c.N)
	}
	for _, k := range sortedMetaKeys(t.Meta) {
		fmt.Fprintf(w, "meta:         %s = %s\n", k, t.Meta[k])
	}
	fmt.Fprintf(w, "warnings:     %d\n", len(t.Warnings))
	for i, wn := range t.Warnings {
		if i == 20 {
			fmt.Fprintf(w, "  … %d more\n", len(t.Warnings)-20)
			break
		}
		fmt.Fprintf(w, "  %s: %s\n", wn.Position, wn.Message)
	}
	if validated {
		if vErr == nil {
			fmt.Fprintf(w, "valid:        yes\n")
		} else {
			fmt.Fprintf(w, "valid:        NO\n")
		}
	}
}

func infoAsJSON(g *globalOpts, t *model.Trace, validated bool, vErr error) error {
	out := infoJSON{Path: t.Path, Format: string(t.Format), Producer: t.Producer, Rank: t.Rank, WorldSize: t.WorldSize,
		Capabilities: nonNilStrings(t.Caps.Names()), Missing: nonNilStrings(t.Caps.Missing()), Notes: nonNilStrings(t.Caps.Notes),
		Counts: map[string]int64{}, Devices: nonNilStrings(deviceLines(t)), Meta: t.Meta, Warnings: []string{}}
	for _, c := range traceCounts(t) {
		out.Counts[c.Name] = c.N
	}
	for _, wn := range t.Warnings {
		out.Warnings = append(out.Warnings, wn.Position+": "+wn.Message)
	}
	if validated {
		ok := vErr == nil
		out.Valid = &ok
		if vErr != nil {
			out.Problems = vErr.Error()
		}
	}
	enc := json.NewEncoder(g.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
