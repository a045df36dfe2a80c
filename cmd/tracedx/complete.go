package main

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracedx/tracedx/detectors"
	detall "github.com/tracedx/tracedx/detectors/all"
	impall "github.com/tracedx/tracedx/importers/all"
	"github.com/tracedx/tracedx/policy"
)

// registerValueCompletions completes the values of --disable (rule IDs),
// --param (RULE. then RULE.PARAM=) and --input-format (the importers'
// formats) on every command of the tree that has those flags.
func registerValueCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("disable") != nil {
			_ = c.RegisterFlagCompletionFunc("disable", completeRuleIDs)
		}
		if c.Flags().Lookup("param") != nil {
			_ = c.RegisterFlagCompletionFunc("param", completeParams)
		}
		if c.Flags().Lookup("input-format") != nil {
			_ = c.RegisterFlagCompletionFunc("input-format", completeInputFormats)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func completeRuleIDs(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, d := range detall.Detectors() {
		if strings.HasPrefix(d.ID, toComplete) {
			out = append(out, d.ID+"\t"+d.Title)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeParams offers "RULE." until a rule is typed, then its parameters
// as "RULE.PARAM=" with the default and unit as the description.
func completeParams(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	rule, _, typedRule := strings.Cut(toComplete, ".")
	for _, d := range detall.Detectors() {
		if len(d.Params) == 0 {
			continue
		}
		if !typedRule {
			if strings.HasPrefix(d.ID, rule) {
				out = append(out, d.ID+".")
			}
			continue
		}
		if d.ID == rule {
			out = append(out, paramCompletions(d, toComplete)...)
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

func paramCompletions(d *detectors.Detector, toComplete string) []string {
	var out []string
	for _, p := range d.Params {
		c := d.ID + "." + p.Name + "="
		if strings.HasPrefix(c, toComplete) {
			out = append(out, c+"\tdefault "+policy.FormatValue(p.Default)+" "+p.Unit)
		}
	}
	return out
}

func completeInputFormats(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	return impall.Registry().Formats(), cobra.ShellCompDirectiveNoFileComp
}
