package main

import (
	"github.com/spf13/cobra"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/export/html" // registers --format html
)

// addRenderFlags adds the renderer options of analyze: --detail and
// --max-name-bytes.
func addRenderFlags(cmd *cobra.Command, opts *analyzeOptions) {
	f := cmd.Flags()
	f.StringVar(&opts.Detail, "detail", "ticket", "text/md/html detail: ticket (Markdown under 60,000 characters, top rows) or full (everything)")
	f.IntVar(&export.MaxNameBytes, "max-name-bytes", export.MaxNameBytes, "names longer than this are shortened with a hash in reports (0 = never)")
	_ = cmd.RegisterFlagCompletionFunc("detail", cobra.FixedCompletions([]string{"ticket", "full"}, cobra.ShellCompDirectiveNoFileComp))
}

// renderOptions checks --detail and returns the renderer options; an HTML
// report written to a file links to the Perfetto export beside it.
func (opts *analyzeOptions) renderOptions() (export.Options, error) {
	var o export.Options
	switch opts.Detail {
	case "ticket", "":
	case "full":
		o.Full = true
	default:
		return export.Options{}, usageError("--detail %q: want ticket or full", opts.Detail)
	}
	if opts.Format == "html" {
		o.Perfetto = html.PerfettoBeside(opts.Output)
	}
	return o, nil
}
