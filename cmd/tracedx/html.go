package main

import (
	"github.com/spf13/cobra"

	"github.com/tracedx/tracedx/export"
	_ "github.com/tracedx/tracedx/export/html" // registers --format html
)

// addRenderFlags adds the renderer options of analyze: --detail and
// --max-name-bytes.
func addRenderFlags(cmd *cobra.Command, opts *analyzeOptions) {
	f := cmd.Flags()
	f.StringVar(&opts.Detail, "detail", "ticket", "text/md/html detail: ticket (Markdown under 60,000 characters, top rows) or full (everything)")
	f.IntVar(&export.MaxNameBytes, "max-name-bytes", export.MaxNameBytes, "names longer than this are shortened with a hash in reports (0 = never)")
	_ = cmd.RegisterFlagCompletionFunc("detail", cobra.FixedCompletions([]string{"ticket", "full"}, cobra.ShellCompDirectiveNoFileComp))
}

// renderOptions checks --detail and returns the renderer options.
func (opts *analyzeOptions) renderOptions() (export.Options, error) {
	switch opts.Detail {
	case "ticket", "":
		return export.Options{}, nil
	case "full":
		return export.Options{Full: true}, nil
	}
	return export.Options{}, usageError("--detail %q: want ticket or full", opts.Detail)
}
