package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newDocsCmd generates the manual pages or Markdown reference of the whole
// command tree with cobra's doc package (for packagers and the docs site).
func newDocsCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:       "docs man|md DIR",
		Short:     "Write the command reference as man pages or Markdown into DIR",
		Example:   "  tracedx docs man /usr/local/share/man/man1\n  tracedx docs md docs/cli",
		Args:      exactArgs(2, "a kind (man or md) and a folder"),
		ValidArgs: []string{"man", "md"},
		Hidden:    false,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[1]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return usageError("%s: %v", dir, unwrapPathError(err))
			}
			root.DisableAutoGenTag = true // byte-identical output for every run
			switch args[0] {
			case "man":
				return doc.GenManTree(root, &doc.GenManHeader{Title: "TRACEDX", Section: "1", Source: "tracedx", Manual: "tracedx manual"}, dir)
			case "md", "markdown":
				return doc.GenMarkdownTree(root, dir)
			}
			return usageError("docs %q: want man or md", args[0])
		},
	}
}
