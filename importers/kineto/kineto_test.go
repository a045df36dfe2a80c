package kineto

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/kinetogen"
	"github.com/tracedx/tracedx/internal/textdiff"
	"github.com/tracedx/tracedx/model"
)

func TestParseNs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"1", 1000, true},
		{"1606910596288053", 1606910596288053000, true},
		{"1712195495519689.047", 1712195495519689047, true},
		{"4458676388068.751", 4458676388068751, true},
		{"59.296", 59296, true},
		{"1419247332500.684", 1419247332500684, true},
		{"1.5", 1500, true},
		{"0.0004", 0, true},
		{"0.0005", 1, true},
		{"1e-3", 1, true},
		{"1.5e3", 1500000, true},
		{"-2.25", -2250, true},
		{"1712195495519689.0471", 1712195495519689047, true},
		{"1712195495519689.0475", 1712195495519689048, true},
		{"9223372036854775.807", 9223372036854775807, true},
		{"9223372036854775.808", 0, false},
		{"99999999999999999999999", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"1e", 0, false},
		{"abc", 0, false},
		{"1x", 0, false},
	} {
		got, ok := parseNs([]byte(c.in))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("parseNs(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestRankFromName(t *testing.T) {
	for name, want := range map[string]int{
		"rank-3.Jul_15.pt.trace.json.gz": 3,
		"trace_rank12.json":              12,
		"x/rank_3.json":                  3,
		"worker_rank0.json":              0,
		"frank3.json":                    model.NoRank,
		"trace.json":                     model.NoRank,
		"ranking.json":                   model.NoRank,
	} {
		if got := RankFromName(name); got != want {
			t.Errorf("RankFromName(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestSniff(t *testing.T) {
	imp := New()
	for _, c := range []struct {
		head string
		min  int
	}{
		{"\n{\n  \"schemaVersion\": 1,", 80},
		{"{\"traceEvents\": [", 80},
		{"[{\"ph\": \"X\", \"cat\": \"Operator\"", 50},
		{"\n  {\n    \"schemaVersion\"", 80},
	} {
		if s := imp.Sniff([]byte(c.head)); s < c.min {
			t.Errorf("Sniff(%q) = %d, want >= %d", c.head, s, c.min)
		}
	}
	for _, h := range []string{"", "# nccl-tests", "SQLite format 3\x00"} {
		if s := imp.Sniff([]byte(h)); s != 0 {
			t.Errorf("Sniff(%q) = %d, want 0", h, s)
		}
	}
	// Other JSON gets a low score, so that it reaches this importer's
	// positioned errors rather than "unrecognised format".
	for _, h := range []string{"{\"foo\": 1}", "[1,2,3]"} {
		if s := imp.Sniff([]byte(h)); s > 10 {
			t.Errorf("Sniff(%q) = %d, want <= 10", h, s)
		}
	}
}

// TestErrors: unreadable input is an *InputError naming the byte.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ name, in, pos string }{
		{"empty", "", "byte 0"},
		{"not json", "hello", "byte 0"},
		{"truncated", `{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 2}, {"ph": "X", "na`, "byte"},
		{"truncated after array", `{"traceEvents": [], "schemaVersion": 1`, "byte"},
		{"missing colon", `{"traceEvents": [{"ph" "X"}]}`, "byte 23"},
		{"bad value", `{"traceEvents": [{"ph": "X", "ts": tru}]}`, "byte"},
		{"garbage after", `{"traceEvents": []} x`, "byte 20"},
		{"bad header value", `{"schemaVersion": [1,}, "traceEvents": []}`, "byte"},
		{"deep nesting", `{"traceEvents": [{"args": ` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}]}`, "byte"},
		{"unbalanced", `{"traceEvents": [}]}`, "byte"},
		// Valid JSON that is not a Kineto trace.
		{"empty object", `{}`, "byte 1: not a Kineto trace"},
		{"no traceEvents", `{"schemaVersion": 1, "deviceProperties": []}`, "byte 43: not a Kineto trace"},
		{"traceEvents object", `{"traceEvents": {"ph": "X"}}`, "byte 16: not a Kineto trace: traceEvents is not an array"},
		{"traceEvents string", `{"traceEvents": "x"}`, "byte 16: not a Kineto trace: traceEvents is not an array"},
		{"null", `null`, "byte 0: not a Kineto trace"},
		{"huge number", `1e999`, "byte 0: not a Kineto trace"},
		{"string", ` "x"`, "byte 1: not a Kineto trace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(context.Background(), strings.NewReader(c.in), "bad.json", importers.Options{})
			if err == nil {
				t.Fatal("no error")
			}
			if !importers.IsInputError(err) {
				t.Fatalf("not an InputError: %v", err)
			}
			if !strings.Contains(err.Error(), c.pos) || !strings.HasPrefix(err.Error(), "bad.json: ") {
				t.Errorf("error %q does not name the file and %q", err, c.pos)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestSmallBuffers feeds the parser one byte per Read, so that every event
// straddles a refill.
func TestSmallBuffers(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "quirks.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := parse(context.Background(), bytes.NewReader(data), "quirks.json", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := parse(context.Background(), &oneByte{data}, "quirks.json", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	want.Dump(&a)
	got.Dump(&b)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("one-byte reads give a different trace:\n%s", textdiff.First(a.String(), b.String()))
	}
}

type oneByte struct{ b []byte }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(o.b) == 0 {
		return 0, io.EOF
	}
	p[0] = o.b[0]
	o.b = o.b[1:]
	return 1, nil
}

// TestGzipAsync imports a large gzip trace through the goroutine pipeline
// and compares it with the plain import of the same bytes.
func TestGzipAsync(t *testing.T) {
	tr := nvidiaTrace()
	dir := t.TempDir()
	var plain bytes.Buffer
	// Enough copies of the step to span several pipeline chunks.
	big := &model.Trace{}
	*big = *tr
	for i := 0; i < 14; i++ {
		plain.Reset()
		if err := kinetogen.Write(&plain, big, kinetogen.Layout{TS: kinetogen.RelativeBase}); err != nil {
			t.Fatal(err)
		}
		if plain.Len() > 12<<20 {
			break
		}
		big = doubled(big)
	}
	p := filepath.Join(dir, "big.json")
	if err := os.WriteFile(p, plain.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "big.json.gz")
	if err := kinetogen.GzipFile(p, gz); err != nil {
		t.Fatal(err)
	}
	a := importFile(t, p)
	b := importFile(t, gz)
	a.Path, b.Path = "x", "x"
	if !bytes.Equal(dumpOf(t, a), dumpOf(t, b)) {
		t.Error("gzip import differs from plain import")
	}
	if len(a.Kernels) < 1000 {
		t.Errorf("only %d kernels", len(a.Kernels))
	}
}

// doubled appends a copy of t's GPU and API records shifted after its end.
func doubled(t *model.Trace) *model.Trace {
	n := *t
	d := t.Capture.End - t.Capture.Start + 1000
	n.Kernels = append(append([]model.Kernel(nil), t.Kernels...), t.Kernels...)
	for i := len(t.Kernels); i < len(n.Kernels); i++ {
		n.Kernels[i].Start += d
		n.Kernels[i].End += d
	}
	n.APICalls = append(append([]model.APICall(nil), t.APICalls...), t.APICalls...)
	for i := len(t.APICalls); i < len(n.APICalls); i++ {
		n.APICalls[i].Start += d
		n.APICalls[i].End += d
	}
	n.Ranges = append(append([]model.Range(nil), t.Ranges...), t.Ranges...)
	for i := len(t.Ranges); i < len(n.Ranges); i++ {
		n.Ranges[i].Start += d
		n.Ranges[i].End += d
	}
	n.Capture.End += d
	return &n
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New().Import(ctx, filepath.Join("testdata", "quirks.json"), importers.Options{})
	if err == nil {
		t.Fatal("no error on a cancelled context")
	}
}

func TestMaxWarnings(t *testing.T) {
	tr, err := New().Import(context.Background(), filepath.Join("testdata", "spoiled.json"), importers.Options{MaxWarnings: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Warnings) != 4 || !strings.Contains(tr.Warnings[3].Message, "more warnings") {
		t.Errorf("warnings not capped: %+v", tr.Warnings)
	}
}

// FuzzParse: any input gives a trace that validates, or an InputError;
// never a panic or a hang.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"quirks.json", "spoiled.json", "graph_flows_only.json", "bare_array_legacy_2020.json",
		"rocm_hip_strings.json", "mtia.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":"stream 7","ts":1.5,"dur":2}]`))
	f.Add([]byte(shapesJSON))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := parse(context.Background(), bytes.NewReader(data), "fuzz.json", importers.Options{})
		if err != nil {
			if !importers.IsInputError(err) {
				t.Fatalf("error is not an InputError: %v", err)
			}
			return
		}
		if err := tr.Validate(); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	})
}

// TestTruncatedGzip: a gzip file cut short is an InputError, not a hang.
func TestTruncatedGzip(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "gzip_base_time.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.json.gz")
	if err := os.WriteFile(p, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = New().Import(context.Background(), p, importers.Options{})
	if err == nil || !importers.IsInputError(err) || !strings.Contains(err.Error(), "byte") {
		t.Fatalf("want a positioned InputError, got %v", err)
	}
	t.Log(err)
}

// TestGzipTrailer: a gzip member without its trailer (CRC-32 and size), or
// with a wrong one, fails as gzip -t does, even when the JSON inside is
// complete.
func TestGzipTrailer(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(`{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}`))
	zw.Close()
	full := buf.Bytes()
	badCRC := bytes.Clone(full)
	badCRC[len(badCRC)-8] ^= 0xFF
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		want string // "" = imports
	}{
		{"whole", full, ""},
		{"no trailer", full[:len(full)-8], "trailer"},
		{"half trailer", full[:len(full)-4], "trailer"},
		{"bad crc", badCRC, "does not match"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name+".json.gz")
			if err := os.WriteFile(p, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := New().Import(context.Background(), p, importers.Options{})
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want != "" && (err == nil || !importers.IsInputError(err) || !strings.Contains(err.Error(), c.want) ||
				!strings.Contains(err.Error(), "byte ")):
				t.Fatalf("want a positioned InputError about %q, got %v", c.want, err)
			}
		})
	}
}
