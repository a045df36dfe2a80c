package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracedx/tracedx/detectors"
	detall "github.com/tracedx/tracedx/detectors/all"
	"github.com/tracedx/tracedx/export/junit"
	"github.com/tracedx/tracedx/model"
	"github.com/tracedx/tracedx/policy"
)

// addPolicyFlags adds --policy and --junit to `tracedx analyze`: the policy
// adjusts the detector configuration and gates the report.
func addPolicyFlags(g *globalOpts, cmd *cobra.Command, opts *analyzeOptions) {
	var policyPath, junitPath string
	f := cmd.Flags()
	f.StringVar(&policyPath, "policy", "", "policy file (YAML): rule settings and gate conditions; exit 1 when a gate fails (see docs/policy.md)")
	f.StringVar(&junitPath, "junit", "", "also write a JUnit XML report to FILE (one test case per rule and per policy gate; - = stdout)")
	opts.Configure = append(opts.Configure, func(cfg *detectors.Config) error {
		if policyPath == "" {
			return nil
		}
		pol, err := policy.Load(policyPath)
		if err != nil {
			return usageError("%v", err)
		}
		opts.policy = pol
		if err := pol.Check(detall.Detectors()); err != nil {
			return usageError("%v", err)
		}
		*cfg = mergeConfig(pol.DetectorConfig(), *cfg)
		return nil
	})
	opts.Gate = append(opts.Gate, func(r *model.Report) error {
		pol := opts.policy
		gates := pol.Evaluate(r)
		if junitPath != "" {
			suite, err := junitSuite(opts, r)
			if err != nil {
				return err
			}
			if err := g.writeOutput(junitPath, func(w io.Writer) error { return junit.Write(w, []junit.Suite{suite}) }); err != nil {
				return err
			}
		}
		var failed []string
		for _, gr := range gates {
			if !gr.Passed {
				failed = append(failed, fmt.Sprintf("  %s:%d: %s", pol.Path, gr.Line, gr.Message))
			}
		}
		if len(failed) > 0 {
			return gateFailed(fmt.Sprintf("%d of %d policy gates failed:\n%s", len(failed), len(gates), strings.Join(failed, "\n")))
		}
		return nil
	})
}

// junitSuite builds the JUnit test suite of one analysed job: a case per
// enabled rule (failing at --fail-on) and a case per policy gate.
func junitSuite(opts *analyzeOptions, r *model.Report) (junit.Suite, error) {
	failSev, gate, err := parseFailOn(opts.FailOn)
	if err != nil {
		return junit.Suite{}, err
	}
	if !gate {
		failSev = junit.Never
	}
	disabled := map[string]bool{}
	for _, id := range opts.Disable {
		disabled[id] = true
	}
	if opts.policy != nil {
		for id := range opts.policy.DetectorConfig().Disabled {
			disabled[id] = true
		}
	}
	var rules []string
	for _, d := range detall.Detectors() {
		if !disabled[d.ID] {
			rules = append(rules, d.ID)
		}
	}
	return junit.FromReport(strings.Join(opts.Files, " "), r, opts.policy.Evaluate(r), junit.Options{FailOn: failSev, Rules: rules}), nil
}

// renderJUnit is `analyze --format junit`.
func renderJUnit(opts *analyzeOptions, w io.Writer, r *model.Report) error {
	suite, err := junitSuite(opts, r)
	if err != nil {
		return err
	}
	return junit.Write(w, []junit.Suite{suite})
}
