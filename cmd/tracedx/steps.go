package main

import (
	"github.com/spf13/pflag"

	"github.com/tracedx/tracedx/model"
)

const stepsFlagDoc = "regular expression naming step ranges the built-in grammars miss; named groups phase, bs and tokens fill the step (e.g. '^fwd_(?P<phase>prefill|decode)_bs(?P<bs>\\d+)$')"

// addStepsFlag declares --steps on a command.
func addStepsFlag(f *pflag.FlagSet, p *string) { f.StringVar(p, "steps", "", stepsFlagDoc) }

// stepParser compiles --steps; nil (no custom grammar) for "".
func stepParser(expr string) (model.StepParser, error) {
	if expr == "" {
		return nil, nil
	}
	c, err := model.CompileStepGrammar(expr)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return c, nil
}
