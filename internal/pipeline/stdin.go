package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tracedx/tracedx/importers"
)

// spoolPrefix names the temporary file standard input is copied to.
const spoolPrefix = "tracedx-stdin-"

// spoolStdin replaces an input path of "-" by a temporary copy of standard
// input: importers read files by path (SQLite and the sniffers need to seek).
// spool is the copy's name ("" when no input is "-"); cleanup removes it.
func spoolStdin(ctx context.Context, paths []string, stdin io.Reader) (out []string, spool string, cleanup func(), err error) {
	cleanup = func() {}
	n := 0
	for _, p := range paths {
		if p == "-" {
			n++
		}
	}
	if n == 0 {
		return paths, "", cleanup, nil
	}
	if n > 1 {
		return nil, "", cleanup, &importers.InputError{File: "-", Err: errors.New("standard input given more than once")}
	}
	if stdin == nil {
		stdin = os.Stdin
	}
	f, err := os.CreateTemp("", spoolPrefix+"*")
	if err != nil {
		return nil, "", cleanup, fmt.Errorf("spooling standard input: %w", err)
	}
	cleanup = func() { os.Remove(f.Name()) }
	// Copy in a goroutine: a read from a pipe blocks, and a cancelled
	// command must not wait for its writer.
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(f, ctxReader{ctx, stdin})
		copied <- err
	}()
	select {
	case err = <-copied:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return nil, "", func() {}, fmt.Errorf("spooling standard input: %w", err)
	}
	out = make([]string, len(paths))
	for i, p := range paths {
		if p == "-" {
			p = f.Name()
		}
		out[i] = p
	}
	return out, f.Name(), cleanup, nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// renameStdin makes an input error about the spooled copy name standard input.
func renameStdin(err error, spool string) error {
	var ie *importers.InputError
	if errors.As(err, &ie) && spool != "" && ie.File == spool {
		ie.File = StdinName
	}
	return err
}
