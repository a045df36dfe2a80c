package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputTargets: -o, --junit and export -o write through devices and
// symlinks instead of replacing them; - is standard output; a full disk is
// exit 3; a missing folder is exit 2.
func TestOutputTargets(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "n")
	haveDev := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3) == nil // like /dev/null
	target := filepath.Join(dir, "target.md")
	link := filepath.Join(dir, "link.md")
	os.Symlink("target.md", link)
	junitLink := filepath.Join(dir, "junit-link.xml")
	os.Symlink("junit.xml", junitLink)

	if haveDev {
		for _, args := range [][]string{
			{"analyze", examplePath, "-o", dev},
			{"analyze", examplePath, "--junit", dev},
			{"export", examplePath, "--to", "perfetto", "--no-findings", "-o", dev},
			{"diff", examplePath, examplePath, "-o", dev},
		} {
			if code, _, stderr := runTracedx(args...); code != 0 {
				t.Errorf("%v: exit %d: %s", args, code, stderr)
			}
			if st, _ := os.Lstat(dev); st.Mode()&fs.ModeCharDevice == 0 {
				t.Fatalf("%v replaced the device with %v", args, st.Mode())
			}
		}
	} else {
		t.Log("mknod not permitted: device case skipped")
	}
	if code, _, stderr := runTracedx("analyze", examplePath, "-f", "md", "-o", link, "--junit", junitLink); code != 0 {
		t.Fatalf("symlink: exit %d: %s", code, stderr)
	}
	for l, tgt := range map[string]string{link: target, junitLink: filepath.Join(dir, "junit.xml")} {
		if st, _ := os.Lstat(l); st.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s replaced", l)
		}
		if b, _ := os.ReadFile(tgt); len(b) == 0 {
			t.Errorf("%s not written through the link", tgt)
		}
	}
	// - is standard output for every command.
	for _, args := range [][]string{
		{"analyze", examplePath, "-o", "-"},
		{"analyze", examplePath, "--junit", "-", "-f", "json", "-o", filepath.Join(dir, "r.json")},
		{"export", examplePath, "--to", "perfetto", "--no-findings", "-o", "-"},
		{"diff", examplePath, examplePath, "-o", "-"},
	} {
		code, stdout, stderr := runTracedx(args...)
		if code != 0 || len(stdout) == 0 {
			t.Errorf("%v: exit %d, %d bytes on stdout: %s", args, code, len(stdout), stderr)
		}
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		code, _, stderr := runTracedx("analyze", examplePath, "-o", "/dev/full")
		if code != exitOutput || !strings.Contains(stderr, "/dev/full") {
			t.Errorf("full disk: exit %d: %s", code, stderr)
		}
	}
	code, _, stderr := runTracedx("analyze", examplePath, "-o", filepath.Join(dir, "no", "such", "r.md"))
	if code != exitInput {
		t.Errorf("missing folder: exit %d: %s", code, stderr)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestStdinInput: - as an input is standard input, named <stdin> in reports
// and errors.
func TestStdinInput(t *testing.T) {
	gz, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cmd := tracedxCmd(t, tmp, "analyze", "-", "-f", "json")
	cmd.Stdin = strings.NewReader(string(gz))
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"<stdin>"`) {
		t.Fatalf("analyze -: %v\n%.300s", err, out)
	}
	cmd = tracedxCmd(t, tmp, "analyze", "-")
	cmd.Stdin = strings.NewReader("{}x")
	b, err := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != exitInput || !strings.Contains(string(b), "<stdin>: ") {
		t.Errorf("bad stdin: %v %s", err, b)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("spool left behind: %v", ents)
	}
}
