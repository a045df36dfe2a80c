// Package outfile is the one way tracedx writes an output file.
//
//   - "-" is standard output (when the caller allows it: Options.Stdout).
//   - A new path, or an existing regular file, is written atomically: into a
//     temporary file of the same folder, synced, then renamed over the target,
//     so a reader never sees half a file and a failure leaves the old file.
//   - A symlink is followed (to its final target, which is then treated as
//     above): the link stays a link.
//   - An existing device, FIFO or other non-regular file is written through
//     in place: `-o /dev/null` never replaces /dev/null with a regular file.
//
// Writes stop with the context: every Write checks it, so a cancelled command
// (SIGINT, SIGTERM) stops within one buffer, and the temporary file is
// removed. RemoveTemps removes the temporary files of writes still in
// progress, for a process that must exit at once.
package outfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Options adjust a write.
type Options struct {
	// Stdout receives the output when the path is "-"; when nil, "-" is an
	// error.
	Stdout io.Writer
	// NoSync skips the fsync before the rename (still atomic after a kill,
	// not after a power loss).
	NoSync bool
}

// File is an output being written. Write to it, then Commit or Abort.
type File struct {
	ctx    context.Context
	w      io.Writer
	f      *os.File // nil for stdout
	tmp    string   // "" when writing in place
	final  string
	perm   fs.FileMode
	noSync bool
	done   bool
}

// Create opens the output named by path (see the package doc).
func Create(ctx context.Context, path string, opts Options) (*File, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if path == "-" {
		if opts.Stdout == nil {
			return nil, fmt.Errorf("-: standard output is not a possible output here")
		}
		return &File{ctx: ctx, w: opts.Stdout, final: "-", done: false}, nil
	}
	target, err := resolve(path)
	if err != nil {
		return nil, err
	}
	out := &File{ctx: ctx, final: target, perm: 0o644, noSync: opts.NoSync}
	st, err := os.Stat(target)
	switch {
	case err == nil && st.IsDir():
		return nil, &fs.PathError{Op: "write", Path: path, Err: errors.New("is a directory")}
	case err == nil && !st.Mode().IsRegular():
		// Devices, FIFOs: write through, never replace.
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		out.f, out.w = f, f
		return out, nil
	case err == nil:
		out.perm = st.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return nil, err
	}
	out.f, out.w, out.tmp = f, f, f.Name()
	track(out.tmp, true)
	return out, nil
}

// resolve follows symlinks to the final target, also when it does not exist
// yet (a dangling link is written through, creating its target).
func resolve(path string) (string, error) {
	for range 40 {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", &fs.PathError{Op: "write", Path: path, Err: errors.New("too many levels of symbolic links")}
}

// Write writes p unless the context is done.
func (o *File) Write(p []byte) (int, error) {
	if err := o.ctx.Err(); err != nil {
		return 0, err
	}
	return o.w.Write(p)
}

// Name is the file written ("-" for standard output).
func (o *File) Name() string { return o.final }

// Commit finishes the output: for an atomic write, sync, close and rename.
func (o *File) Commit() error {
	if o.done {
		return nil
	}
	o.done = true
	if o.f == nil {
		return o.ctx.Err()
	}
	if o.tmp == "" {
		return o.f.Close()
	}
	err := o.ctx.Err()
	if err == nil && !o.noSync {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(o.tmp, o.perm)
	}
	if err == nil {
		err = os.Rename(o.tmp, o.final)
	}
	if err != nil {
		os.Remove(o.tmp)
	}
	track(o.tmp, false)
	return err
}

// Abort drops the output: the temporary file is removed, the target is left
// as it was (a device or FIFO keeps what was already written to it).
func (o *File) Abort() {
	if o.done {
		return
	}
	o.done = true
	if o.f == nil {
		return
	}
	o.f.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
		track(o.tmp, false)
	}
}

// Write creates the output named by path, calls fn with it and commits it;
// on any error the output is aborted.
func Write(ctx context.Context, path string, opts Options, fn func(io.Writer) error) error {
	o, err := Create(ctx, path, opts)
	if err != nil {
		return err
	}
	if err := fn(o); err != nil {
		o.Abort()
		return err
	}
	return o.Commit()
}

var (
	tempsMu sync.Mutex
	temps   = map[string]bool{}
)

func track(name string, on bool) {
	tempsMu.Lock()
	defer tempsMu.Unlock()
	if on {
		temps[name] = true
	} else {
		delete(temps, name)
	}
}

// RemoveTemps removes the temporary files of every write in progress. It is
// for a process about to exit without unwinding (a second interrupt).
func RemoveTemps() {
	tempsMu.Lock()
	defer tempsMu.Unlock()
	for name := range temps {
		os.Remove(name)
		delete(temps, name)
	}
}
