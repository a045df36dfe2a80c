package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	detall "github.com/tracedx/tracedx/detectors/all"
)

func newRulesCmd(g *globalOpts) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List the detectors (rules) and their stable IDs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(g.Stdout, "%-18s %-12s %-8s %s\n", "ID", "LAYER", "SEVERITY", "TITLE")
			for _, d := range detall.Detectors() {
				fmt.Fprintf(g.Stdout, "%-18s %-12s %-8s %s\n", d.ID, d.Layer, d.Severity, d.Title)
			}
			return nil
		},
	}
	explain := &cobra.Command{
		Use:   "explain ID",
		Short: "Print a rule's documentation, parameters and how to fix what it finds",
		Args:  exactArgs(1, "one rule ID"),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			var ids []string
			for _, d := range detall.Detectors() {
				ids = append(ids, d.ID)
			}
			sort.Strings(ids)
			return ids, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			d, ok := detall.ByID(args[0])
			if !ok {
				return usageError("unknown rule %q (see 'tracedx rules')", args[0])
			}
			w := g.Stdout
			fmt.Fprintf(w, "%s — %s\nlayer: %s, default severity: %s\n", d.ID, d.Title, d.Layer, d.Severity)
			if len(d.Needs) > 0 {
				var n []string
				for _, c := range d.Needs {
					n = append(n, c.Name())
				}
				fmt.Fprintf(w, "needs one of: %s\n", strings.Join(n, ", "))
			}
			fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(d.Doc))
			if len(d.Params) > 0 {
				fmt.Fprintf(w, "\nParameters (override with --param %s.NAME=VALUE):\n", d.ID)
				for _, p := range d.Params {
					fmt.Fprintf(w, "  %-22s default %g %s — %s\n", p.Name, p.Default, p.Unit, p.Doc)
				}
			}
			return nil
		},
	}
	cmd.AddCommand(explain)
	return cmd
}

func sortedMetaKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
