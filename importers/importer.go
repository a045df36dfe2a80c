package importers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/tracedx/tracedx/model"
)

// Options tune an import.
type Options struct {
	// MaxWarnings bounds how many warnings are kept per file; further ones are
	// counted in one summary warning. 0 means the default (1000).
	MaxWarnings int
}

// Importer reads one input format into the common model.
type Importer interface {
	// Format is the format's report name.
	Format() model.Format
	// Sniff scores how likely head (the first bytes of the file, already
	// decompressed when the file is gzip) is this format: 0 = not at all,
	// 100 = certain.
	Sniff(head []byte) int
	// Import reads the file at path. It returns an *InputError when the file
	// cannot be read as this format; spoiled records become trace warnings.
	Import(ctx context.Context, path string, opts Options) (*model.Trace, error)
}

// InputError is an unreadable input: it names the file and the place.
type InputError struct {
	File string
	Pos  string // "byte 123", "line 4", "table KERNEL"; may be empty
	Err  error
}

func (e *InputError) Error() string {
	if e.Pos == "" {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.File, e.Pos, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// Errorf returns an *InputError for file at pos.
func Errorf(file, pos, format string, args ...any) error {
	return &InputError{File: file, Pos: pos, Err: fmt.Errorf(format, args...)}
}

// IsInputError reports whether err is (or wraps) an *InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// SniffSize is how many leading bytes Sniff receives.
const SniffSize = 4096

// Open opens path for streaming, transparently decompressing gzip (detected by
// its magic bytes, not by the file name). The caller closes the reader.
func Open(path string) (io.ReadCloser, bool, error) {
	// Pipes and devices are refused: a format is sniffed by reading the head
	// before the importer reads the file again, and a pipe with no writer
	// would hang the run.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		what := "not a regular file"
		if st.IsDir() {
			what = "is a directory"
		}
		return nil, false, &InputError{File: path, Err: fmt.Errorf("%s (save the trace to a file first)", what)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, &InputError{File: path, Err: unwrapPath(err)}
	}
	br := bufio.NewReaderSize(f, 1<<20)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, true, &InputError{File: path, Pos: "byte 0", Err: fmt.Errorf("bad gzip header: %v", err)}
		}
		return &gzipFile{Reader: zr, f: f}, true, nil
	}
	return &plainFile{Reader: br, f: f}, false, nil
}

type gzipFile struct {
	*gzip.Reader
	f *os.File
}

// Read passes on the inflater's data; a member that ends before its
// trailer (CRC-32 and size) or fails its checksum is an error, as in
// gzip -t, never the end of the input.
func (g *gzipFile) Read(p []byte) (int, error) {
	n, err := g.Reader.Read(p)
	switch {
	case err == io.ErrUnexpectedEOF:
		err = errors.New("gzip data truncated: the member ends before its trailer (CRC-32 and size)")
	case errors.Is(err, gzip.ErrChecksum):
		err = errors.New("gzip data corrupt: CRC-32 or size in the trailer does not match")
	}
	return n, err
}

func (g *gzipFile) Close() error {
	g.Reader.Close()
	return g.f.Close()
}

type plainFile struct {
	*bufio.Reader
	f *os.File
}

func (p *plainFile) Close() error { return p.f.Close() }

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// DeepSniffSize is how many leading bytes Sniff receives on a second look,
// when no importer was sure of the first SniffSize bytes.
const DeepSniffSize = 256 << 10

// Head returns up to SniffSize leading bytes of path, decompressed if gzip.
func Head(path string) ([]byte, error) { return headN(path, SniffSize) }

func headN(path string, size int) ([]byte, error) {
	rc, _, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := make([]byte, size)
	n, err := io.ReadFull(rc, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, &InputError{File: path, Pos: "byte 0", Err: err}
	}
	return buf[:n], nil
}

// Registry holds the known importers.
type Registry struct {
	list []Importer
}

// NewRegistry returns a registry of the given importers.
func NewRegistry(imps ...Importer) *Registry { return &Registry{list: imps} }

// Formats lists the registered format names, sorted.
func (r *Registry) Formats() []string {
	var out []string
	for _, imp := range r.list {
		out = append(out, string(imp.Format()))
	}
	sort.Strings(out)
	return out
}

// ByFormat returns the importer of the named format.
func (r *Registry) ByFormat(name string) (Importer, bool) {
	for _, imp := range r.list {
		if string(imp.Format()) == name {
			return imp, true
		}
	}
	return nil, false
}

// Detect sniffs path and returns the best-scoring importer.
func (r *Registry) Detect(path string) (Importer, error) {
	head, err := Head(path)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(head)) == 0 {
		return nil, Errorf(path, "byte 0", "file is empty")
	}
	var best Importer
	bestScore := 0
	for _, imp := range r.list {
		if s := imp.Sniff(head); s > bestScore {
			best, bestScore = imp, s
		}
	}
	if bestScore < 80 && len(head) == SniffSize {
		// An unsure guess on a longer file: look further (a log's telling
		// lines may come after the first few KiB of launcher output).
		if long, err := headN(path, DeepSniffSize); err == nil {
			var deep Importer
			deepScore := 0
			for _, imp := range r.list {
				if s := imp.Sniff(long); s > deepScore {
					deep, deepScore = imp, s
				}
			}
			if deep != nil {
				best = deep
			}
		}
	}
	if best == nil {
		return nil, Errorf(path, "byte 0", "unrecognised input format (want one of: %s)", strings.Join(r.Formats(), ", "))
	}
	return best, nil
}

// Import detects path's format (or uses format when non-empty) and imports it.
func (r *Registry) Import(ctx context.Context, path, format string, opts Options) (*model.Trace, error) {
	var imp Importer
	if format != "" {
		var ok bool
		if imp, ok = r.ByFormat(format); !ok {
			return nil, fmt.Errorf("unknown input format %q (want one of: %s)", format, strings.Join(r.Formats(), ", "))
		}
	} else {
		var err error
		if imp, err = r.Detect(path); err != nil {
			return nil, err
		}
	}
	return imp.Import(ctx, path, opts)
}

// Warner collects warnings for one file with a cap.
type Warner struct {
	T       *model.Trace
	Max     int
	dropped int
}

// NewWarner returns a warner for t honouring opts.MaxWarnings.
func NewWarner(t *model.Trace, opts Options) *Warner {
	m := opts.MaxWarnings
	if m <= 0 {
		m = 1000
	}
	return &Warner{T: t, Max: m}
}

// Warn records a warning at pos.
func (w *Warner) Warn(pos, format string, args ...any) {
	if len(w.T.Warnings) >= w.Max {
		w.dropped++
		return
	}
	w.T.Warn(pos, format, args...)
}

// Flush adds a summary warning for dropped warnings.
func (w *Warner) Flush() {
	if w.dropped > 0 {
		w.T.Warnings = append(w.T.Warnings, model.Warning{File: w.T.Path, Position: "-", Message: fmt.Sprintf("%d more warnings not shown", w.dropped)})
		w.dropped = 0
	}
}
