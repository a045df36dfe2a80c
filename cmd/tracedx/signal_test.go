package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets a test run this test binary as the tracedx command
// (TRACEDX_AS_MAIN=1), so that signals and exit codes are those of a real
// process.
func TestMain(m *testing.M) {
	if os.Getenv("TRACEDX_AS_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// tracedxCmd returns the command running tracedx with args in a process of
// its own, its temporary folder set to tmp.
func tracedxCmd(t *testing.T, tmp string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "TRACEDX_AS_MAIN=1", "TMPDIR="+tmp)
	return cmd
}

// TestSignalsStopPromptly: a command blocked on its input (standard input
// held open, nothing written) stops at SIGINT / SIGTERM with 130 / 143,
// within a second, and leaves no temporary file (the stdin spool, an output
// temp) behind.
func TestSignalsStopPromptly(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		args []string
	}{
		{syscall.SIGINT, 130, []string{"analyze", "-", "-o", "report.md"}},
		{syscall.SIGTERM, 143, []string{"export", "-", "--to", "perfetto", "-o", "out.json"}},
		{syscall.SIGTERM, 143, []string{"diff", "-", "base.json"}},
	} {
		t.Run(tc.args[0]+"-"+tc.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "base.json"), []byte(`{"traceEvents":[]}`), 0o644)
			cmd := tracedxCmd(t, dir, tc.args...)
			cmd.Dir = dir
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer stdin.Close()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			stdin.Write([]byte(`{"traceEvents":[`)) // a trace that never ends
			// Signal once the command is spooling standard input (its
			// handlers are installed before): a fixed sleep lost the race
			// on a loaded machine and the process died of the signal.
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if m, _ := filepath.Glob(filepath.Join(dir, "tracedx-stdin-*")); len(m) > 0 {
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
			sent := time.Now()
			cmd.Process.Signal(tc.sig)
			err = cmd.Wait()
			took := time.Since(sent)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("exit %v, want %d; stderr: %s", err, tc.code, stderr.String())
			}
			if took > 4*time.Second { // generous: the machine may be loaded; the forced exit is at 5 s
				t.Errorf("took %s to stop", took)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.Name() != "base.json" {
					t.Errorf("left behind: %s", e.Name())
				}
			}
			if !strings.Contains(stderr.String(), "tracedx: ") {
				t.Errorf("no message: %q", stderr.String())
			}
		})
	}
}
