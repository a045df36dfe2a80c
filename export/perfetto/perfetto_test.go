package perfetto

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/export/timeline"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

func sampleTrace(rank int) *model.Trace {
	b := fixture.New(fmt.Sprintf("rank%d.json", rank), model.FormatKineto)
	b.T.Rank = rank
	th := b.Thread(7, "main")
	b.Thread(8, "")
	b.Range(th, model.RangeStep, "ProfilerStep#1", 0, 100)
	b.Range(th, model.RangeCPUOp, "aten::mm", 1, 20)
	b.Range(th, model.RangeMark, "checkpoint \"a\"", 50, 50)
	b.Kernel(0, 7, "sgemm_128x64", 10, 30, th, 2)
	b.Kernel(0, 7, "relu_kernel", 40, 45, th, 21)
	b.Copy(0, 8, model.MemHtoD, model.MemPageable, model.MemDevice, 4096, 71, 75, th, "cudaMemcpyAsync", 60, 62)
	b.Collective(0, 9, model.CollAllReduce, 1<<20, 80, 95, th, 76)
	b.T.Kernels[0].Config = b.T.InternConfig(model.LaunchConfig{Grid: [3]int32{4, 2, 1}, Block: [3]int32{128, 1, 1}, Stream: 7})
	b.T.Counters = append(b.T.Counters, model.CounterSeries{Name: b.T.Intern("SM Active"), Unit: b.T.Intern("%"), Device: 0},
		model.CounterSeries{Name: b.T.Intern("host mem"), Device: model.NoDevice})
	b.T.Samples = append(b.T.Samples, model.CounterSample{Time: fixture.US(10), Value: 55.5, Series: 0},
		model.CounterSample{Time: fixture.US(60), Value: 80, Series: 0},
		model.CounterSample{Time: fixture.US(60), Value: 1e9, Series: 1})
	return b.Build()
}

func sampleFindings() []model.Finding {
	return []model.Finding{
		{Rule: "kernel-gap", Severity: model.SevWarning, Title: "GPU idle gaps between kernels", Message: "GPU 0 idle 10.0µs",
			Evidence: []model.Evidence{{Rank: 0, Device: 0, Stream: model.NoStream, Thread: -1, Start: fixture.US(30), End: fixture.US(40), Note: "gap 1"},
				{Rank: 0, Device: 0, Stream: model.NoStream, Thread: -1, Start: fixture.US(35), End: fixture.US(70), Note: "overlapping"}}},
		{Rule: "sync-api", Severity: model.SevError, Title: "Host syncs", Message: "2 syncs",
			Evidence: []model.Evidence{{Rank: 1, Device: 0, Stream: 7, Thread: 7, Start: fixture.US(60), End: fixture.US(60)}}},
	}
}

type traceFile struct {
	DisplayTimeUnit string         `json:"displayTimeUnit"`
	OtherData       map[string]any `json:"otherData"`
	Events          []event        `json:"traceEvents"`
}

type event struct {
	Ph   string         `json:"ph"`
	Pid  *int           `json:"pid"`
	Tid  *int64         `json:"tid"`
	TS   *float64       `json:"ts"`
	Dur  *float64       `json:"dur"`
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	ID   *int64         `json:"id"`
	BP   string         `json:"bp"`
	S    string         `json:"s"`
	Args map[string]any `json:"args"`
}

func decode(t *testing.T, data []byte) traceFile {
	t.Helper()
	var tf traceFile
	if err := json.Unmarshal(data, &tf); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	return tf
}

func write(t *testing.T, set *model.TraceSet, opts Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, set, opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestStructure(t *testing.T) {
	set := fixture.Set(sampleTrace(0), sampleTrace(1))
	data := write(t, set, Options{Findings: sampleFindings()})
	tf := decode(t, data)
	if tf.DisplayTimeUnit != "ns" || tf.OtherData["schema"] != Schema {
		t.Errorf("header: %q %v", tf.DisplayTimeUnit, tf.OtherData)
	}
	procNames := map[int]string{}
	threadNames := map[[2]int64]string{}
	byPh := map[string][]event{}
	for _, ev := range tf.Events {
		if ev.Pid == nil || ev.Tid == nil || ev.Ph == "" {
			t.Fatalf("event without ph/pid/tid: %+v", ev)
		}
		byPh[ev.Ph] = append(byPh[ev.Ph], ev)
		if ev.Ph == "M" && ev.Name == "process_name" {
			procNames[*ev.Pid] = ev.Args["name"].(string)
		}
		if ev.Ph == "M" && ev.Name == "thread_name" {
			threadNames[[2]int64{int64(*ev.Pid), *ev.Tid}] = ev.Args["name"].(string)
		}
		if ev.Ph == "X" && (ev.TS == nil || ev.Dur == nil || *ev.Dur < 0) {
			t.Errorf("X event without ts/dur: %+v", ev)
		}
	}
	for _, ev := range tf.Events {
		if _, ok := procNames[*ev.Pid]; !ok {
			t.Errorf("event on unnamed process %d: %+v", *ev.Pid, ev)
		}
		if ev.Ph == "X" || ev.Ph == "i" {
			if _, ok := threadNames[[2]int64{int64(*ev.Pid), *ev.Tid}]; !ok {
				t.Errorf("slice on unnamed thread %d/%d: %+v", *ev.Pid, *ev.Tid, ev)
			}
		}
	}
	wantProcs := []string{"rank 0 · GPU 0: Test GPU", "rank 0 · python3 (pid 100)", "rank 0 · host counters",
		"rank 1 · GPU 0: Test GPU", "rank 1 · python3 (pid 100)", "rank 1 · host counters", "tracedx findings"}
	for i, w := range wantProcs {
		if procNames[i+1] != w {
			t.Errorf("process %d = %q, want %q", i+1, procNames[i+1], w)
		}
	}
	if threadNames[[2]int64{1, 7}] != "stream 7" || threadNames[[2]int64{2, 7}] != "main" || threadNames[[2]int64{2, 8}] != "thread 8" {
		t.Errorf("thread names: %v", threadNames)
	}
	cats := map[string]int{}
	for _, ev := range byPh["X"] {
		cats[ev.Cat]++
	}
	want := map[string]int{"kernel": 6, "memcpy": 2, "cuda_runtime": 8, "step": 2, "cpu-op": 2, "finding": 2}
	for c, n := range want {
		if cats[c] != n {
			t.Errorf("%d X events of cat %s, want %d (all: %v)", cats[c], c, n, cats)
		}
	}
	if len(byPh["i"]) != 3 { // two marks, one instant finding
		t.Errorf("%d instant events, want 3", len(byPh["i"]))
	}
	// Flows: every start has its finish, four per rank (3 kernels, 1 copy).
	starts, finishes := map[int64]event{}, map[int64]event{}
	for _, ev := range byPh["s"] {
		starts[*ev.ID] = ev
	}
	for _, ev := range byPh["f"] {
		finishes[*ev.ID] = ev
		if ev.BP != "e" {
			t.Errorf("flow end without bp=e: %+v", ev)
		}
	}
	if len(starts) != 8 || len(finishes) != 8 {
		t.Errorf("flows: %d starts, %d finishes, want 8", len(starts), len(finishes))
	}
	for id, s := range starts {
		f, ok := finishes[id]
		if !ok || *f.TS < *s.TS {
			t.Errorf("flow %d: start %+v finish %+v", id, s, f)
		}
	}
	if len(byPh["C"]) != 6 {
		t.Errorf("%d counter events, want 6", len(byPh["C"]))
	}
	// Findings: overlapping evidence of one rule goes on two lanes.
	var lanes []string
	for _, ev := range byPh["X"] {
		if ev.Cat == "finding" {
			lanes = append(lanes, threadNames[[2]int64{int64(*ev.Pid), *ev.Tid}])
			if ev.Args["rule"] != "kernel-gap" || ev.Args["severity"] != "warning" || ev.Args["ref"] != "kernel-gap#1" {
				t.Errorf("finding args: %v", ev.Args)
			}
		}
	}
	if strings.Join(lanes, ",") != "kernel-gap,kernel-gap (2)" {
		t.Errorf("finding lanes = %v", lanes)
	}
	if !bytes.Contains(data, []byte(`"name":"ncclDevKernel_all_reduce","cat":"kernel","args":{"device":0,"stream":9,"correlation":4,"collective":"all_reduce","bytes":1048576,"group":"0"}`)) {
		t.Errorf("collective kernel args missing:\n%s", data)
	}
	// Exact time formatting.
	if !bytes.Contains(data, []byte(`"ts":10.000,"dur":20.000,"name":"sgemm_128x64","cat":"kernel","args":{"device":0,"stream":7,"correlation":1,"grid":[4,2,1],"block":[128,1,1]}`)) {
		t.Errorf("kernel event not formatted as expected:\n%s", data)
	}
}

func TestGolden(t *testing.T) {
	set := fixture.Set(sampleTrace(0))
	got := write(t, set, Options{Findings: sampleFindings()[:1]})
	path := filepath.Join("testdata", "sample.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update)", path)
	}
	if again := write(t, set, Options{Findings: sampleFindings()[:1]}); !bytes.Equal(got, again) {
		t.Error("output differs between runs")
	}
}

// longTrace is 10,000 kernels of 80µs every 100µs with a 5ms hole in the middle.
func longTrace() *model.Trace {
	b := fixture.New("long.json", model.FormatKineto)
	b.T.Rank = 0
	th := b.Thread(1, "main")
	for i := 0; i < 10000; i++ {
		st := float64(i) * 100
		if i >= 5000 {
			st += 5000
		}
		b.Kernel(0, 7, fmt.Sprintf("k%d", i%7), st, st+80, th, st-10)
	}
	return b.Build()
}

func TestAround(t *testing.T) {
	tr := longTrace()
	set := fixture.Set(tr)
	gapStart, gapEnd := fixture.US(4999*100+80), fixture.US(5000*100+5000)
	findings := []model.Finding{
		{Rule: "step-latency", Title: "x", Evidence: []model.Evidence{{Rank: 0, Start: 0, End: fixture.US(10)}}},
		{Rule: "kernel-gap", Severity: model.SevWarning, Title: "GPU idle gaps", Message: "gap",
			Evidence: []model.Evidence{{Rank: 0, Device: 0, Stream: model.NoStream, Thread: -1, Start: gapStart, End: gapEnd}}},
	}
	win, f, err := timeline.AroundFinding(set, findings, "kernel-gap#1", -1)
	if err != nil || f != &findings[1] {
		t.Fatal(err, f)
	}
	full := write(t, set, Options{Findings: findings})
	small := write(t, set, Options{Findings: findings, Range: &win})
	if len(small)*20 > len(full) {
		t.Errorf("window output %d bytes, full %d: not small", len(small), len(full))
	}
	tf := decode(t, small)
	var kernels int
	var found bool
	for _, ev := range tf.Events {
		switch {
		case ev.Ph == "X" && ev.Cat == "kernel":
			kernels++
			st, en := int64(*ev.TS*1000+0.5), int64((*ev.TS+*ev.Dur)*1000+0.5)
			if st > int64(win.End) || en < int64(win.Start) {
				t.Errorf("kernel outside window: %+v", ev)
			}
		case ev.Ph == "X" && ev.Cat == "finding":
			if ev.Args["ref"] == "kernel-gap#1" && int64(*ev.TS*1000+0.5) == int64(gapStart) {
				found = true
			}
		}
	}
	if !found {
		t.Error("window output lacks the evidence slice")
	}
	// The 5ms gap padded by 2.5ms on each side holds 25 kernels on each side.
	if kernels < 40 || kernels > 60 {
		t.Errorf("%d kernels in the window", kernels)
	}
	if tf.OtherData["window_start_ns"] == nil {
		t.Error("window not recorded in otherData")
	}
}

func TestAroundErrors(t *testing.T) {
	set := fixture.Set(longTrace())
	findings := []model.Finding{{Rule: "kernel-gap", Evidence: []model.Evidence{{Start: 10, End: 20}}}, {Rule: "trace-health"}}
	for spec, want := range map[string]string{
		"nope":           "no finding of rule",
		"kernel-gap#2":   "has 1 finding",
		"kernel-gap#x":   "must be a number",
		"kernel-gap@3":   "has 1 evidence",
		"trace-health#1": "no evidence",
	} {
		_, _, err := timeline.AroundFinding(set, findings, spec, -1)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", spec, err, want)
		}
	}
	iv, _, err := timeline.AroundFinding(set, findings, "kernel-gap", 5)
	if err != nil || iv.Start != 5 || iv.End != 25 {
		t.Errorf("kernel-gap pad 5 = %v, %v", iv, err)
	}
}

func BenchmarkWrite(b *testing.B) {
	set := fixture.Set(longTrace())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Write(io.Discard, set, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(len(set.Traces[0].Kernels) + len(set.Traces[0].APICalls))
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func TestOrigin(t *testing.T) {
	b := fixture.New("epoch.json", model.FormatKineto)
	th := b.Thread(1, "main")
	b.Kernel(0, 7, "k", 1, 2, th, 0.5)
	tr := b.Build()
	const epoch = 1_700_000_000_123_456_789
	for i := range tr.Kernels {
		tr.Kernels[i].Start += epoch
		tr.Kernels[i].End += epoch
	}
	for i := range tr.APICalls {
		tr.APICalls[i].Start += epoch
		tr.APICalls[i].End += epoch
	}
	set := fixture.Set(tr)
	if o := Origin(set); o != 1_700_000_000_000_000_000 {
		t.Fatalf("origin = %d", o)
	}
	data := write(t, set, Options{})
	if !bytes.Contains(data, []byte(`"time_origin_ns":1700000000000000000`)) || !bytes.Contains(data, []byte(`"ts":123457.789,"dur":1.000,"name":"k"`)) {
		t.Errorf("rebased output:\n%s", data)
	}
	abs := write(t, set, Options{Absolute: true})
	if !bytes.Contains(abs, []byte(`"ts":1700000000123457.789,"dur":1.000,"name":"k"`)) {
		t.Errorf("absolute output:\n%s", abs)
	}
	if Origin(fixture.Set(sampleTrace(0))) != 0 {
		t.Error("small times rebased")
	}
}
