package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/version"
)

// Exit codes.
const (
	exitOK    = 0
	exitGate  = 1 // findings at or above --fail-on, a failed policy gate, a diff regression
	exitInput = 2 // bad input or usage
)

// globalOpts are shared by every command.
type globalOpts struct {
	Stdout io.Writer
	Stderr io.Writer
	// StderrIsTTY tells commands whether progress may be drawn on stderr.
	StderrIsTTY bool
	Ctx         context.Context
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// gateFailed returns an error that exits with code 1 and prints msg.
func gateFailed(msg string) error { return &exitError{code: exitGate, err: errors.New(msg)} }

// usageError returns an error that exits with code 2.
func usageError(format string, args ...any) error {
	return &exitError{code: exitInput, err: fmt.Errorf(format, args...)}
}

// exitCode maps an error to the process exit code. Unreadable inputs and
// usage mistakes are 2; gate failures are 1.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if importers.IsInputError(err) {
		return exitInput
	}
	// Everything else reaching here is a usage or input problem (unknown
	// flag, missing file, bad flag value).
	return exitInput
}

// run is main without os.Exit: the testable entry point.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	g := &globalOpts{Stdout: stdout, Stderr: stderr, Ctx: ctx}
	if f, ok := stderr.(*os.File); ok {
		g.StderrIsTTY = term.IsTerminal(int(f.Fd()))
	}
	root := newRootCmd(g)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		var ee *exitError
		if !(errors.As(err, &ee) && ee.err == nil) {
			msg := strings.TrimSpace(err.Error())
			fmt.Fprintf(stderr, "tracedx: %s\n", msg)
		}
	}
	return exitCode(err)
}

func newRootCmd(g *globalOpts) *cobra.Command {
	root := &cobra.Command{
		Use:   "tracedx",
		Short: "Explain why a GPU job is slow, from its traces",
		Long: `tracedx reads GPU performance traces after the fact — Nsight Systems SQLite
exports, PyTorch Profiler (Kineto) JSON traces (plain or gzipped) and
nccl-tests / rccl-tests logs — turns them into one timeline model, runs
detectors over it and writes a report fit for a bug ticket or a CI gate.

Exit codes: 0 ok; 1 the gate failed (findings at or above --fail-on, a policy
condition, a diff regression); 2 bad input or usage.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Version,
	}
	root.SetOut(g.Stdout)
	root.SetErr(g.Stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%v (see '%s --help')", err, c.CommandPath())
	})
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	// The whole command tree, in one place.
	root.AddCommand(
		newAnalyzeCmd(g, nil),
		newBatchCmd(g, nil),
		newDiffCmd(g, nil),
		newExportCmd(g, nil),
		newInfoCmd(g, nil),
		newRulesCmd(g),
		newVersionCmd(g),
	)
	return root
}

// exactArgs is cobra.ExactArgs with exit code 2 and a clear message.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageError("%s: missing %s (see '%s --help')", cmd.CommandPath(), what, cmd.CommandPath())
		}
		return nil
	}
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s: want %s (see '%s --help')", cmd.CommandPath(), what, cmd.CommandPath())
		}
		return nil
	}
}
