package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/outfile"
	"github.com/tracedx/tracedx/internal/version"
)

// Exit codes (documented in the root command's help and the README).
const (
	exitOK      = 0
	exitGate    = 1   // findings at or above --fail-on, a failed policy gate, a diff regression
	exitInput   = 2   // bad input or usage
	exitOutput  = 3   // could not finish: a full disk or I/O error on an output, an internal error
	exitSIGINT  = 130 // interrupted (128 + SIGINT)
	exitSIGTERM = 143 // terminated (128 + SIGTERM)
)

// maxErrorBytes bounds the error line printed on stderr.
const maxErrorBytes = 4096

// globalOpts are shared by every command.
type globalOpts struct {
	Stdout io.Writer
	Stderr io.Writer
	// StderrIsTTY tells commands whether progress may be drawn on stderr
	// with terminal control codes (false under NO_COLOR, TERM=dumb and when
	// stderr is not a terminal).
	StderrIsTTY bool
	Ctx         context.Context
	// Quiet drops progress and informational messages on stderr (errors
	// and warnings stay); Verbose adds timings and per-input summaries.
	Quiet, Verbose bool
	// Mem is the memory limit inputs are checked against (memlimit.go).
	Mem memLimit
	// stopBudget ends the collector's budget for the inputs (memlimit.go).
	stopBudget func()
	// MaxMemory is --max-memory in bytes (0: none); cancel stops the
	// command with a cause when the live data go above it.
	MaxMemory byteSize
	cancel    context.CancelCauseFunc
}

// info prints an informational line on stderr unless --quiet.
func (g *globalOpts) info(format string, args ...any) {
	if !g.Quiet {
		fmt.Fprintf(g.Stderr, format+"\n", args...)
	}
}

// debug prints a line on stderr with --verbose.
func (g *globalOpts) debug(format string, args ...any) {
	if g.Verbose && !g.Quiet {
		fmt.Fprintf(g.Stderr, "tracedx: "+format+"\n", args...)
	}
}

// progress is where progress is drawn: nowhere under --quiet.
func (g *globalOpts) progress() io.Writer {
	if g.Quiet {
		return io.Discard
	}
	return g.Stderr
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

// exitCode maps an error to the process exit code: 1 gate, 2 bad input or
// usage, 3 a resource or internal failure (full disk, I/O error).
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.code == exitOutput && !resourceError(err) && !errors.Is(err, errInternal) {
			// A missing folder, a permission or a directory given as -o
			// is the user's to fix: usage.
			return exitInput
		}
		return ee.code
	}
	if resourceError(err) {
		return exitOutput
	}
	if importers.IsInputError(err) {
		return exitInput
	}
	// Everything else reaching here is a usage or input problem (unknown
	// flag, missing file, bad flag value).
	return exitInput
}

// errInternal marks a bug (a recovered panic).
var errInternal = errors.New("internal error")

// resourceError reports a failure of the machine rather than of the input:
// no space, quota, I/O error, file too large, read-only file system, an
// input too large for the memory limit.
func resourceError(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EFBIG, syscall.EROFS, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// run is main without os.Exit: the testable entry point. SIGINT and SIGTERM
// cancel the command's context: it stops, removes its temporary files and
// exits 130 or 143. A second signal, or a command still running 5 s after
// the first, exits at once (temporary files removed).
func run(args []string, stdout, stderr io.Writer) (code int) {
	ctx, cancelCause := context.WithCancelCause(context.Background())
	cancel := func() { cancelCause(nil) }
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var sigCode atomic.Int32
	go func() {
		var force <-chan time.Time
		done := ctx.Done()
		for {
			select {
			case s, ok := <-sigs:
				if !ok {
					return
				}
				if sigCode.Load() != 0 {
					outfile.RemoveTemps()
					os.Exit(int(sigCode.Load()))
				}
				c := exitSIGINT
				if s == syscall.SIGTERM {
					c = exitSIGTERM
				}
				sigCode.Store(int32(c))
				cancel()
				force = time.After(5 * time.Second)
			case <-force:
				fmt.Fprintf(stderr, "tracedx: still running 5 s after the signal; exiting\n")
				outfile.RemoveTemps()
				os.Exit(int(sigCode.Load()))
			case <-done:
				if sigCode.Load() == 0 {
					return // the command finished
				}
				done = nil
			}
		}
	}()
	g := &globalOpts{Stdout: stdout, Stderr: stderr, Ctx: ctx, Mem: setSoftMemoryLimit(), cancel: cancelCause}
	if f, ok := stderr.(*os.File); ok {
		g.StderrIsTTY = term.IsTerminal(int(f.Fd())) && colorAllowed()
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "tracedx: internal error: %v\n%s", r, debug.Stack())
			code = exitOutput
		}
	}()
	defer g.stopMemBudget()
	root := newRootCmd(g)
	root.SetArgs(args)
	start := time.Now()
	err := root.Execute()
	var memErr *exitError
	if c := context.Cause(ctx); err != nil && errors.As(c, &memErr) {
		err = c // --max-memory stopped the run: say so, not "context canceled"
	}
	g.debug("finished in %s (exit %d)", time.Since(start).Round(time.Millisecond), exitCode(err))
	if c := sigCode.Load(); c != 0 {
		name := "interrupted"
		if c == exitSIGTERM {
			name = "terminated"
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "tracedx: %s\n", export.ShortenName(strings.TrimSpace(err.Error()), maxErrorBytes))
		}
		fmt.Fprintf(stderr, "tracedx: %s\n", name)
		return int(c)
	}
	if err != nil {
		var ee *exitError
		if !(errors.As(err, &ee) && ee.err == nil) {
			// One bounded line: an input can put anything in an error.
			msg := export.ShortenName(strings.TrimSpace(err.Error()), maxErrorBytes)
			fmt.Fprintf(stderr, "tracedx: %s\n", msg)
		}
	}
	return exitCode(err)
}

// colorAllowed reports whether terminal control codes may be written:
// not under NO_COLOR (any value, https://no-color.org) nor TERM=dumb.
func colorAllowed() bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return false
	}
	return os.Getenv("TERM") != "dumb"
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
condition, a diff regression); 2 bad input or usage; 3 could not finish (a full
disk or I/O error on an output, an input too large for the memory limit, an
internal error); 130 interrupted (SIGINT), 143 terminated (SIGTERM).

Memory: GOMEMLIMIT is honoured; otherwise the collector's soft limit follows
the inputs' size, never above half of ulimit -v, or three quarters of the
cgroup's or the machine's memory. Inputs whose uncompressed size exceeds
ulimit -v, the cgroup's or the machine's memory are refused before reading
(exit 3).

An input FILE of - is read from standard input (spooled to a temporary file
first: the importers read files by path); -o - writes to standard output.
NO_COLOR or TERM=dumb turn terminal control codes (the batch progress bar) off;
so does a standard error that is not a terminal.`,
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
	// --version without cobra's -v shorthand: -v is not --version (as in gh
	// and kubectl); 'tracedx version' prints the commit and date too.
	root.Flags().Bool("version", false, "print the version and exit")
	pf := root.PersistentFlags()
	pf.BoolVarP(&g.Quiet, "quiet", "q", false, "print nothing on stderr but warnings and errors (no progress)")
	pf.BoolVar(&g.Verbose, "verbose", false, "also print timings and what each step did on stderr")
	root.MarkFlagsMutuallyExclusive("quiet", "verbose")
	root.PersistentPreRun = func(cmd *cobra.Command, args []string) {
		if g.Mem.Bytes > 0 {
			g.debug("memory: %s of %s; collector's soft limit %s %s", g.Mem.Source, humanSize(g.Mem.Bytes), humanSize(g.Mem.Soft), g.Mem.SoftFrom)
		}
	}
	// The whole command tree, in one place.
	root.AddCommand(
		newAnalyzeCmd(g, nil),
		newBatchCmd(g, nil),
		newDiffCmd(g, nil),
		newExportCmd(g, nil),
		newInfoCmd(g, nil),
		newRulesCmd(g),
		newVersionCmd(g),
		newDocsCmd(root),
	)
	registerValueCompletions(root)
	return root
}

// writeOutput writes an output named on the command line: "" or "-" is
// standard output; anything else goes through outfile (atomic for regular
// files, in place for devices, FIFOs and symlink targets). Errors name the
// file; a failed write of a file (full disk, I/O) is an output error (exit 3).
func (g *globalOpts) writeOutput(path string, write func(io.Writer) error) error {
	if path == "" {
		path = "-"
	}
	err := outfile.Write(g.Ctx, path, outfile.Options{Stdout: g.Stdout}, write)
	if err == nil || g.Ctx.Err() != nil {
		return err
	}
	return &exitError{code: exitOutput, err: fmt.Errorf("writing %s: %w", path, err)}
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
