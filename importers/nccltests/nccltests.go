package nccltests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/model"
)

type importer struct{}

// New returns the nccl-tests / rccl-tests log importer.
func New() importers.Importer { return importer{} }

func (importer) Format() model.Format { return model.FormatNCCLTests }

// Sniff scores the head of a file: nccl-tests header lines, table headers,
// rank lines and NCCL_DEBUG lines (behind launcher prefixes or not).
func (importer) Sniff(head []byte) int {
	head = dropTabular(head)
	h := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(h) == 0 {
		return 0
	}
	if bytes.HasPrefix(h, []byte("SQLite format")) || h[0] == 0x1f {
		return 0
	}
	jsonish := h[0] == '{'
	if h[0] == '[' {
		// A JSON array, not a launcher prefix such as "[0] " or "[1,0]<stdout>:".
		rest := bytes.TrimLeft(h[1:], " \t\r\n")
		jsonish = len(rest) == 0 || rest[0] == '{' || rest[0] == '"' || rest[0] == ']'
	}
	switch {
	case bytes.Contains(head, []byte("nccl-tests version")),
		bytes.Contains(head, []byte("Collective test starting:")),
		bytes.Contains(head, []byte("rccl-tests: Version")),
		bytes.Contains(head, []byte("nThread ")) && bytes.Contains(head, []byte("nGpus ")) && bytes.Contains(head, []byte("minBytes")),
		bytes.Contains(head, []byte("nThreads:")) && bytes.Contains(head, []byte("minBytes:")):
		return 95
	case bytes.Contains(head, []byte("out-of-place")) && bytes.Contains(head, []byte("busbw")),
		bytes.Contains(head, []byte("(B)")) && bytes.Contains(head, []byte("(elements)")),
		bytes.Contains(head, []byte("Avg bus bandwidth")), bytes.Contains(head, []byte("Out of bounds values")):
		return 90
	}
	if jsonish {
		return 0
	}
	switch {
	case bytes.Contains(head, []byte("Using devices")) && bytes.Contains(head, []byte("Rank")),
		bytes.Contains(head, []byte(" NCCL INFO ")), bytes.Contains(head, []byte(" NCCL WARN ")):
		return 70
	case bytes.Contains(head, []byte("Test NCCL failure")), bytes.Contains(head, []byte("Test CUDA failure")):
		return 65
	case bytes.Contains(head, []byte("NCCL version ")):
		return 50
	case bytes.Contains(head, []byte("start failed on ")), bytes.Contains(head, []byte("launch failed on ")),
		bytes.Contains(head, []byte(": Test failure ")), bytes.Contains(head, []byte("_perf ")):
		// A launcher failure or a command line with no output yet.
		return 30
	}
	// Bare table rows (an excerpt): several lines of 11+ whitespace tokens
	// that start with two integers.
	rows := 0
	for _, ln := range bytes.Split(head, []byte("\n")) {
		f := bytes.Fields(ln)
		if len(f) >= 11 && isInt(f[0]) && isInt(f[1]) {
			rows++
		}
	}
	if rows >= 3 {
		return 60
	}
	return 0
}

// dropTabular removes tab-separated lines (three tabs or more) from a head
// before sniffing: nccl-tests and NCCL never print them, while a TSV or a
// spreadsheet export about nccl-tests runs (a corpus MANIFEST.tsv, say)
// quotes every marker the sniffer looks for.
func dropTabular(head []byte) []byte {
	if bytes.Count(head, []byte("\t")) < 3 {
		return head
	}
	var out []byte
	for _, ln := range bytes.SplitAfter(head, []byte("\n")) {
		if bytes.Count(ln, []byte("\t")) < 3 {
			out = append(out, ln...)
		}
	}
	return out
}

func (importer) Import(ctx context.Context, path string, opts importers.Options) (*model.Trace, error) {
	rc, _, err := importers.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return parse(ctx, rc, path, opts)
}

// Parse reads an nccl-tests / rccl-tests log from r; name is used in
// positions and errors. The result is finalized and valid.
func Parse(r io.Reader, name string, opts importers.Options) (*model.Trace, error) {
	return parse(context.Background(), r, name, opts)
}

// maxKeep is how much of one physical line is kept for parsing; the rest of
// a longer line is read and dropped (there is no line-length limit).
const maxKeep = 1 << 20

// lineReader yields lines without their line terminator (LF, CRLF).
type lineReader struct {
	r    *bufio.Reader
	buf  []byte
	n    int  // 1-based number of the last line returned
	long bool // the last line was longer than maxKeep
}

func newLineReader(r io.Reader) *lineReader {
	if br, ok := r.(*bufio.Reader); ok && br.Size() >= 64<<10 {
		return &lineReader{r: br}
	}
	return &lineReader{r: bufio.NewReaderSize(r, 256<<10)}
}

// next returns the next line; ok is false at the end of input.
func (lr *lineReader) next() (line []byte, ok bool, err error) {
	lr.long = false
	frag, err := lr.r.ReadSlice('\n')
	if err == nil {
		lr.n++
		return trimEOL(frag), true, nil
	}
	lr.buf = lr.buf[:0]
	for {
		if room := maxKeep - len(lr.buf); room > 0 {
			if len(frag) > room {
				lr.buf = append(lr.buf, frag[:room]...)
				lr.long = true
			} else {
				lr.buf = append(lr.buf, frag...)
			}
		} else if len(frag) > 0 {
			lr.long = true
		}
		if err == bufio.ErrBufferFull {
			frag, err = lr.r.ReadSlice('\n')
			continue
		}
		break
	}
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	if err == io.EOF && len(lr.buf) == 0 && !lr.long {
		return nil, false, nil
	}
	lr.n++
	return trimEOL(lr.buf), true, nil
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// stripPrefixes removes ANSI colour escapes and launcher decorations: Open
// MPI --tag-output "[1,0]<stdout>:", MPICH/Hydra "[0] " and Slurm --label
// "0: ". A "[3] NCCL INFO ..." line (NCCL prefix trimmed by a user) keeps its
// "[3]".
func stripPrefixes(b []byte) []byte {
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = stripANSI(b)
	}
	// Open MPI: [N,M]<stdout>: or <stderr>:
	if len(b) > 4 && b[0] == '[' {
		if i := bytes.IndexByte(b, ']'); i > 0 && i+1 < len(b) && b[i+1] == '<' {
			inner := b[1:i]
			if c := bytes.IndexByte(inner, ','); c > 0 && isInt(inner[:c]) && isInt(inner[c+1:]) {
				if j := bytes.Index(b[i:], []byte(">:")); j > 0 {
					b = b[i+j+2:]
				}
			}
		}
	}
	// Hydra: [N] rest
	if len(b) > 3 && b[0] == '[' {
		if i := bytes.IndexByte(b, ']'); i > 1 && i+1 < len(b) && b[i+1] == ' ' && isInt(b[1:i]) {
			rest := b[i+2:]
			if !bytes.HasPrefix(rest, []byte("NCCL ")) {
				return rest
			}
			return b
		}
	}
	// Slurm --label: "  N: rest"
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	j := i
	for j < len(b) && j-i < 7 && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j > i && j+1 < len(b) && b[j] == ':' && b[j+1] == ' ' {
		return b[j+2:]
	}
	return b
}

func stripANSI(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '[' {
			j := i + 2
			for j < len(b) && (b[j] == ';' || (b[j] >= '0' && b[j] <= '9')) {
				j++
			}
			if j < len(b) && b[j] == 'm' {
				i = j
				continue
			}
		}
		out = append(out, b[i])
	}
	return out
}

func isInt(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parse(ctx context.Context, r io.Reader, name string, opts importers.Options) (*model.Trace, error) {
	t := model.NewTrace(name, model.FormatNCCLTests)
	p := newParser(t, opts)
	lr := newLineReader(r)
	for {
		line, ok, err := lr.next()
		if err != nil {
			return nil, importers.Errorf(name, fmt.Sprintf("line %d", lr.n+1), "read: %v", err)
		}
		if !ok {
			break
		}
		if lr.n&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if lr.long {
			p.w.Warn(pos(lr.n), "line longer than %d bytes; only its first %d bytes were read", maxKeep, maxKeep)
		}
		p.line(lr.n, line)
	}
	if p.recognized == 0 {
		if p.binary {
			return nil, importers.Errorf(name, pos(p.firstBinary), "binary data: not an nccl-tests log")
		}
		if lr.n == 0 {
			return nil, importers.Errorf(name, "line 0", "empty input: not an nccl-tests log")
		}
		return nil, importers.Errorf(name, "line 1", "no nccl-tests, rccl-tests or NCCL output found in %d lines", lr.n)
	}
	p.finish(lr.n)
	p.w.Flush()
	t.Finalize()
	if err := t.Validate(); err != nil {
		return nil, importers.Errorf(name, "", "internal: imported model is invalid: %v", err)
	}
	return t, nil
}

func pos(n int) string { return fmt.Sprintf("line %d", n) }
