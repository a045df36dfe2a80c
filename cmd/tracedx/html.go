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
	addMaxNameFlag(cmd, &opts.MaxNameBytes)
	_ = cmd.RegisterFlagCompletionFunc("detail", cobra.FixedCompletions([]string{"ticket", "full"}, cobra.ShellCompDirectiveNoFileComp))
}

// addMaxNameFlag adds --max-name-bytes (reports and Perfetto output).
func addMaxNameFlag(cmd *cobra.Command, v *int) {
	cmd.Flags().IntVar(v, "max-name-bytes", export.DefaultMaxNameBytes, "names longer than this are shortened with a hash (0 = never)")
}

// nameCap turns --max-name-bytes into the renderers' option (0 there
// means the default; negative, no cap).
func nameCap(flag int) (int, error) {
	switch {
	case flag < 0:
		return 0, usageError("--max-name-bytes %d: want 0 (no cap) or a positive size", flag)
	case flag == 0:
		return -1, nil
	case flag < 64:
		return 0, usageError("--max-name-bytes %d: want at least 64 (room for the hash tag)", flag)
	}
	return flag, nil
}

// renderOptions checks --detail and --max-name-bytes and returns the
// renderer options; an HTML report written to a file links to the Perfetto
// export beside it.
func (opts *analyzeOptions) renderOptions() (export.Options, error) {
	maxName, err := nameCap(opts.MaxNameBytes)
	if err != nil {
		return export.Options{}, err
	}
	o := export.Options{MaxNameBytes: maxName}
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
