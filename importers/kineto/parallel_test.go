package kineto

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/internal/kinetogen"
	"github.com/tracedx/tracedx/internal/textdiff"
)

var (
	seqCfg = parCfg{min: -1}
	// tinyCfg runs the pipeline from the first event with small batches, so
	// that small inputs cross many batch boundaries.
	tinyCfg = parCfg{min: 0, batch: 256, workers: 3, inflight: 4}
)

// parseDump parses data with cfg and returns the trace's dump or the error
// text.
func parseDump(t testing.TB, ctx context.Context, data []byte, cfg parCfg) string {
	t.Helper()
	tr, err := parseWith(ctx, bytes.NewReader(data), "x.json", importers.Options{}, cfg)
	if err != nil {
		return "error: " + err.Error()
	}
	var b bytes.Buffer
	if err := tr.Dump(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	bigOnce sync.Once
	bigData []byte
	bigErr  error
)

// bigTrace is a ~40 MB replicated corpus trace.
func bigTrace(t *testing.T) []byte {
	if testing.Short() {
		t.Skip("large input")
	}
	src := filepath.Join(corpus.Dir(t, "corpus/kineto"), benchSource)
	bigOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kineto-par")
		if err != nil {
			bigErr = err
			return
		}
		defer os.RemoveAll(dir)
		dst := filepath.Join(dir, "big.json")
		if bigErr = kinetogen.Replicate(src, dst, 40<<20); bigErr != nil {
			return
		}
		bigData, bigErr = os.ReadFile(dst)
	})
	if bigErr != nil {
		t.Fatal(bigErr)
	}
	return bigData
}

func checkSame(t *testing.T, name string, data []byte, cfgs ...parCfg) {
	t.Helper()
	want := parseDump(t, context.Background(), data, seqCfg)
	for _, cfg := range cfgs {
		if got := parseDump(t, context.Background(), data, cfg); got != want {
			t.Errorf("%s: %+v differs from the sequential parse:\n%s", name, cfg, textdiff.First(want, got))
		}
	}
}

// TestParallelLarge: on a large input the pipeline (default settings, and
// small batches) gives the sequential parser's dump byte for byte.
func TestParallelLarge(t *testing.T) {
	data := bigTrace(t)
	def := defaultPar()
	def.workers = max(def.workers, 2)
	def.min = 8 << 20
	def.inflight = 3*def.workers + 2
	small := parCfg{min: 1 << 20, batch: 64 << 10, workers: 3, inflight: 5}
	want := parseDump(t, context.Background(), data, seqCfg)
	if strings.HasPrefix(want, "error") {
		t.Fatal(want)
	}
	for _, cfg := range []parCfg{def, small} {
		b0, r0 := pipelineBatches.Load(), pipelineRewinds.Load()
		if got := parseDump(t, context.Background(), data, cfg); got != want {
			t.Fatalf("%+v differs from the sequential parse:\n%s", cfg, textdiff.First(want, got))
		}
		b, r := pipelineBatches.Load()-b0, pipelineRewinds.Load()-r0
		t.Logf("%+v: %d batches, %d rewinds", cfg, b, r)
		if want := int64(len(data)) / int64(cfg.batch) / 2; b < want || r != 1 {
			t.Errorf("%+v: the pipeline handled %d batches (want >= %d) and rewound %d times (want 1)", cfg, b, want, r)
		}
	}
}

// TestParallelErrors: errors planted far into a large input (truncation,
// a garbled event, a bad separator) and spoiled elements (not an object)
// give the sequential parser's error text (byte offset) or dump.
func TestParallelErrors(t *testing.T) {
	data := bigTrace(t)
	def := defaultPar()
	def.workers = max(def.workers, 2)
	def.min = 8 << 20
	def.inflight = 3*def.workers + 2
	small := parCfg{min: 1 << 20, batch: 64 << 10, workers: 2, inflight: 3}
	// An event start about 70% into the file.
	at := bytes.Index(data[len(data)*7/10:], []byte(`{"ph"`))
	if at < 0 {
		at = bytes.Index(data[len(data)*7/10:], []byte("{"))
	}
	at += len(data) * 7 / 10
	cases := map[string][]byte{
		"truncated-mid-event": data[:at+20],
		"truncated-at-event":  data[:at],
		"garbled": func() []byte {
			b := bytes.Clone(data)
			b[at+1] = 'x' // {x"ph"...
			return b
		}(),
		"bad-separator": func() []byte {
			b := bytes.Clone(data)
			i := bytes.LastIndexByte(b[:at], ',')
			b[i] = ';'
			return b
		}(),
		"not-an-object": func() []byte {
			b := append(bytes.Clone(data[:at]), `17, "x", [1,2], `...)
			return append(b, data[at:]...)
		}(),
		"unterminated-string": func() []byte {
			b := bytes.Clone(data[:at])
			b = append(b, `{"ph": "X", "name": "abc`...)
			return b
		}(),
	}
	for name, d := range cases {
		want := parseDump(t, context.Background(), d, seqCfg)
		if name != "not-an-object" && !strings.HasPrefix(want, "error: ") {
			t.Fatalf("%s: sequential parse did not fail", name)
		}
		if name == "not-an-object" && strings.HasPrefix(want, "error: ") {
			t.Fatalf("%s: %s", name, want)
		}
		for _, cfg := range []parCfg{def, small} {
			if got := parseDump(t, context.Background(), d, cfg); got != want {
				t.Errorf("%s: %+v differs from the sequential parse:\n%s", name, cfg, textdiff.First(want, got))
			}
		}
	}
}

// failingReader returns err after n bytes.
type failingReader struct {
	r   io.Reader
	n   int
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	n, err := f.r.Read(p[:min(len(p), f.n, 100000)])
	f.n -= n
	return n, err
}

// TestParallelReadError: a read error far into the input is reported at
// the same byte, with the same text, as by the sequential parser.
func TestParallelReadError(t *testing.T) {
	data := bigTrace(t)
	cfg := parCfg{min: 1 << 20, batch: 64 << 10, workers: 2, inflight: 4}
	parse := func(cfg parCfg) string {
		fr := &failingReader{r: bytes.NewReader(data), n: len(data) * 3 / 4, err: errors.New("disk on fire")}
		_, err := parseWith(context.Background(), fr, "x.json", importers.Options{}, cfg)
		if err == nil {
			t.Fatal("no error")
		}
		return err.Error()
	}
	want := parse(seqCfg)
	if !strings.Contains(want, "disk on fire") {
		t.Fatalf("sequential: %s", want)
	}
	if got := parse(cfg); got != want {
		t.Fatalf("pipeline: %s\nsequential: %s", got, want)
	}
}

// slowCancel cancels its context after n bytes have been read.
type slowCancel struct {
	r      io.Reader
	n      int
	cancel func()
}

func (s *slowCancel) Read(p []byte) (int, error) {
	if s.n <= 0 {
		s.cancel()
	}
	n, err := s.r.Read(p[:min(len(p), 1<<20)])
	s.n -= n
	return n, err
}

// TestParallelCancelAndLeaks: a cancelled context stops the pipeline with
// the context's error, and no goroutine outlives a parse (cancelled, failed
// or successful).
func TestParallelCancelAndLeaks(t *testing.T) {
	data := bigTrace(t)
	cfg := parCfg{min: 1 << 20, batch: 256 << 10, workers: 2, inflight: 4}
	before := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := parseWith(ctx, bytes.NewReader(data), "x.json", importers.Options{}, cfg); !errors.Is(err, context.Canceled) && (err == nil || !strings.Contains(err.Error(), "context canceled")) {
		t.Fatalf("cancelled before: err = %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	sc := &slowCancel{r: bytes.NewReader(data), n: len(data) / 2, cancel: cancel}
	if _, err := parseWith(ctx, sc, "x.json", importers.Options{}, cfg); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("cancelled midway: err = %v", err)
	}
	cancel()
	if _, err := parseWith(context.Background(), bytes.NewReader(data[:len(data)/2]), "x.json", importers.Options{}, cfg); err == nil {
		t.Fatal("truncated input parsed")
	}
	if _, err := parseWith(context.Background(), bytes.NewReader(data), "x.json", importers.Options{}, cfg); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines before, %d after", before, n)
	}
}

// TestParallelSmall: the pipeline with tiny batches agrees with the
// sequential parse on every fixture and on every truncation of some.
func TestParallelSmall(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfgs := []parCfg{tinyCfg, {min: 0, batch: 1, workers: 1, inflight: 2}, {min: 100, batch: 64, workers: 2, inflight: 8}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, f, data, cfgs...)
		if len(data) < 20000 {
			for n := 0; n < len(data); n += 1 + n/50 {
				checkSame(t, f, data[:n], tinyCfg)
			}
		}
	}
}

// TestParallelTinyEvents: elements much smaller than the batch size (which
// would make a batch hold too many parsed events) keep the pipeline bounded
// and the result unchanged, also when the element size changes midway.
func TestParallelTinyEvents(t *testing.T) {
	tiny := bytes.Repeat([]byte(`{"ph":"i"},`), 200000)
	big := bytes.Repeat([]byte(`{"ph":"X","cat":"cpu_op","name":"`+strings.Repeat("n", 300)+`","pid":1,"tid":2,"ts":1,"dur":2},`), 5000)
	cfg := parCfg{min: 64 << 10, batch: 512 << 10, workers: 2, inflight: 4}
	for name, body := range map[string][]byte{"tiny": tiny, "big-then-tiny": append(bytes.Clone(big), tiny...)} {
		data := append(append([]byte("["), body...), `{"ph":"i"}]`...)
		b0, r0 := pipelineBatches.Load(), pipelineRewinds.Load()
		checkSame(t, name, data, cfg)
		b, r := pipelineBatches.Load()-b0, pipelineRewinds.Load()-r0
		t.Logf("%s: %d batches, %d rewinds", name, b, r)
		if b == 0 || r > 3 {
			t.Errorf("%s: the pipeline handled %d batches and rewound %d times", name, b, r)
		}
	}
}

// FuzzParallel: the pipeline with tiny batches gives the sequential
// parser's result on any input.
func FuzzParallel(f *testing.F) {
	for _, name := range []string{"quirks.json", "spoiled.json", "rocm_hip_strings.json", "mtia.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := parseDump(t, context.Background(), data, seqCfg)
		for _, cfg := range []parCfg{tinyCfg, {min: 0, batch: 16, workers: 2, inflight: 2}} {
			if got := parseDump(t, context.Background(), data, cfg); got != want {
				t.Fatalf("%+v differs from the sequential parse:\n%s", cfg, textdiff.First(want, got))
			}
		}
	})
}
