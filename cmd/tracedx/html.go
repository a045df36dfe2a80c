package main

import (
	"github.com/spf13/cobra"

	"github.com/tracedx/tracedx/export"
	_ "github.com/tracedx/tracedx/export/html" // registers --format html
)

// renderOpts are the renderer options of analyze (--detail).
var renderOpts export.Options

func init() {
	analyzeFlagHooks = append(analyzeFlagHooks, func(cmd *cobra.Command, _ *analyzeOptions) {
		f := cmd.Flags()
		var detail string
		f.StringVar(&detail, "detail", "ticket", "text/md/html detail: ticket (Markdown under 60,000 characters, top rows) or full (everything)")
		f.IntVar(&export.MaxNameBytes, "max-name-bytes", export.MaxNameBytes, "names longer than this are shortened with a hash in reports (0 = never)")
		_ = cmd.RegisterFlagCompletionFunc("detail", cobra.FixedCompletions([]string{"ticket", "full"}, cobra.ShellCompDirectiveNoFileComp))
		prev := cmd.PreRunE
		cmd.PreRunE = func(c *cobra.Command, args []string) error {
			switch detail {
			case "ticket", "":
			case "full":
				renderOpts.Full = true
			default:
				return usageError("--detail %q: want ticket or full", detail)
			}
			if prev != nil {
				return prev(c, args)
			}
			return nil
		}
	})
}
