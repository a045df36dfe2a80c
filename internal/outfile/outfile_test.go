package outfile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func hello(w io.Writer) error { _, err := io.WriteString(w, "hello\n"); return err }

func noTemps(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestRegularAndNew(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.txt")
	if err := Write(context.Background(), p, Options{}, hello); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "hello\n" {
		t.Errorf("new file = %q", b)
	}
	os.Chmod(p, 0o600)
	if err := Write(context.Background(), p, Options{}, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "x" || st.Mode().Perm() != 0o600 {
		t.Errorf("replaced file = %q mode %v", b, st.Mode())
	}
	// A failing writer leaves the old content and no temporary file.
	if err := Write(context.Background(), p, Options{}, func(w io.Writer) error { io.WriteString(w, "half"); return errors.New("boom") }); err == nil {
		t.Error("error lost")
	}
	if b, _ := os.ReadFile(p); string(b) != "x" {
		t.Errorf("failed write changed the file: %q", b)
	}
	noTemps(t, dir)
}

func TestSymlinkWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.txt")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink("target.txt", link); err != nil {
		t.Skip(err)
	}
	if err := Write(context.Background(), link, Options{}, hello); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
		t.Error("the symlink was replaced")
	}
	if b, _ := os.ReadFile(target); string(b) != "hello\n" {
		t.Errorf("target = %q", b)
	}
	// A dangling link creates its target.
	dangling := filepath.Join(dir, "dangling")
	os.Symlink("new.txt", dangling)
	if err := Write(context.Background(), dangling, Options{}, hello); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new.txt")); string(b) != "hello\n" {
		t.Errorf("dangling target = %q", b)
	}
	noTemps(t, dir)
}

func TestDevNull(t *testing.T) {
	before, err := os.Stat("/dev/null")
	if err != nil {
		t.Skip("no /dev/null")
	}
	// Write through a symlink to the device, so the test never needs root.
	dir := t.TempDir()
	link := filepath.Join(dir, "null")
	os.Symlink("/dev/null", link)
	for _, p := range []string{link, "/dev/null"} {
		if err := Write(context.Background(), p, Options{}, hello); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	after, _ := os.Stat("/dev/null")
	if after.Mode()&fs.ModeCharDevice == 0 || !os.SameFile(before, after) {
		t.Fatal("/dev/null was replaced")
	}
	noTemps(t, dir)
}

// TestMknod is the reproduction of the report: a character device made
// with mknod (where permitted) stays a device.
func TestMknod(t *testing.T) {
	dir := t.TempDir()
	n := filepath.Join(dir, "n")
	if err := syscall.Mknod(n, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod not permitted here: %v", err)
	}
	if err := Write(context.Background(), n, Options{}, hello); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(n); st.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("device replaced by %v", st.Mode())
	}
	noTemps(t, dir)
}

func TestFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	if err := Write(context.Background(), p, Options{}, hello); err != nil {
		t.Fatal(err)
	}
	if b := <-got; string(b) != "hello\n" {
		t.Errorf("reader got %q", b)
	}
	if st, _ := os.Lstat(p); st.Mode()&fs.ModeNamedPipe == 0 {
		t.Error("FIFO replaced")
	}
}

func TestStdoutAndDir(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(context.Background(), "-", Options{Stdout: &buf}, hello); err != nil || buf.String() != "hello\n" {
		t.Errorf("stdout: %v %q", err, buf.String())
	}
	if err := Write(context.Background(), "-", Options{}, hello); err == nil {
		t.Error("- accepted without a stdout")
	}
	if err := Write(context.Background(), t.TempDir(), Options{}, hello); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
}

func TestCancelRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	os.WriteFile(p, []byte("old"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	err := Write(ctx, p, Options{}, func(w io.Writer) error {
		for i := 0; ; i++ {
			if i == 10 {
				cancel()
			}
			if _, err := w.Write(make([]byte, 4096)); err != nil {
				return err
			}
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Error("cancelled write replaced the file")
	}
	noTemps(t, dir)
	// RemoveTemps drops a write in progress.
	o, err := Create(context.Background(), filepath.Join(dir, "x"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	RemoveTemps()
	noTemps(t, dir)
	o.Abort()
}
