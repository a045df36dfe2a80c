package gpumetrics

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/nsys"
	"github.com/tracedx/tracedx/internal/nsysgen"
	"github.com/tracedx/tracedx/model"
)

// gpuSpec is one GPU of a generated export: its metric names (as nsys of
// one generation prints them) and the value of each metric in a sample row
// (idle rows print 0 for every metric).
type gpuSpec struct {
	metrics []string
	values  []int
	idleRow func(i int) bool
}

// export writes an Nsight Systems SQLite export from the documented schema
// (TARGET_INFO_GPU_METRICS(typeId, sourceId, typeName, metricId,
// metricName), GPU_METRICS(timestamp, typeId, metricId, value)): no real
// export with GPU metrics was available, so these fixtures are generated
// and not observed. rows samples per GPU, 100 µs apart (10 kHz).
func export(t *testing.T, rows int, gpus ...gpuSpec) *model.Trace {
	t.Helper()
	var b strings.Builder
	b.WriteString(`CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113'), ('EXPORT_SCHEMA_VERSION', '3.13.0');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '2023-11-14T22:13:20', '2023-11-14T22:13:20');
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, busLocation TEXT, totalMemory INTEGER, memoryBandwidth INTEGER,
  smCount INTEGER, cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, value INTEGER NOT NULL);
`)
	for g, spec := range gpus {
		fmt.Fprintf(&b, "INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, %d, 'NVIDIA H100 80GB HBM3', '0000:%02x:00.0', 85899345920, 3352320000000, 132, %d, 9, 0);\n", g, 0x1b+g, g)
		for m, name := range spec.metrics {
			fmt.Fprintf(&b, "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (%d, 1, 'GPU %d - H100 (GH100)', %d, '%s');\n", 65536+g, g, m, name)
		}
		for i := 0; i < rows; i++ {
			var vals []string
			for m, v := range spec.values {
				if spec.idleRow != nil && spec.idleRow(i) {
					v = 0
				}
				vals = append(vals, fmt.Sprintf("(%d, %d, %d, %d)", 1000000+i*100000, 65536+g, m, v))
			}
			fmt.Fprintf(&b, "INSERT INTO GPU_METRICS VALUES %s;\n", strings.Join(vals, ", "))
		}
	}
	path := filepath.Join(t.TempDir(), "metrics.sqlite")
	if err := nsysgen.Build(path, b.String()); err != nil {
		t.Fatal(err)
	}
	tr, err := nsys.New().Import(context.Background(), path, importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	return tr
}

// Metric names of nsys 2022.4+ (Hopper set) and of nsys 2021-2022 (bare).
var (
	hopper = []string{"GPC Clock Frequency [MHz]", "SMs Active [Throughput %]", "SM Issue [Throughput %]", "Tensor Active [Throughput %]",
		"DRAM Read Bandwidth [Throughput %]", "DRAM Write Bandwidth [Throughput %]", "PCIe RX Throughput [Throughput %]",
		"PCIe TX Throughput [Throughput %]", "PCIe Read Requests to BAR1 [Requests]", "NVLink RX Requests User Data [Throughput %]",
		"NVLink RX Responses User Data [Throughput %]", "NVLink RX Responses Protocol Data [Throughput %]", "NVLink TX Requests User Data [Throughput %]"}
	bare = []string{"GR Active", "SM Active", "SM Issue", "Tensor Active / FP16 Active", "DRAM Read Bandwidth", "DRAM Write Bandwidth",
		"PCIe Read Throughput", "PCIe Write Throughput"}
)

func analyse(tr *model.Trace) detectors.Result {
	return detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{Detector}, detectors.Config{})
}

func titles(fs []model.Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Severity.String()+":"+f.Title)
	}
	return strings.Join(s, " | ")
}

func TestClassify(t *testing.T) {
	want := map[string]kind{"SMs Active [Throughput %]": kSMActive, "SM Active": kSMActive, "SM Issue [Throughput %]": kSMIssue,
		"Tensor Active / FP16 Active": kTensor, "DRAM Write Bandwidth [Throughput %]": kDRAMWrite, "PCIe Read Throughput": kPCIeRX,
		"PCIe Read Requests to BAR1 [Requests]": kNone, "NVLink RX Responses Protocol Data [Throughput %]": kNone,
		"NVLink TX Requests User Data [Throughput %]": kNVLinkTX, "GPC Clock Frequency [MHz]": kNone, "GR Active [Throughput %]": kNone}
	for name, k := range want {
		unit := ""
		if i := strings.IndexByte(name, '['); i >= 0 {
			unit = strings.Trim(name[i:], "[]")
		}
		if got := classify(name, unit); got != k {
			t.Errorf("classify(%q) = %d, want %d", name, got, k)
		}
	}
}

// TestPlantedDecodeMemoryBound: GPU 0 runs memory-bound decode kernels
// (DRAM 76 %, SMs 45 %: DRAM is the limit, the SMs are not reported); GPU 1
// pulls data over PCIe at 85 %; GPU 2 runs small kernels that fill 40 % of
// the SMs with DRAM at 20 % and idles a fifth of the time.
func TestPlantedDecodeMemoryBound(t *testing.T) {
	tr := export(t, 200,
		gpuSpec{metrics: hopper, values: []int{1755, 45, 30, 8, 62, 14, 3, 1, 0, 0, 0, 0, 0}},
		gpuSpec{metrics: hopper, values: []int{1755, 90, 60, 40, 20, 5, 85, 10, 0, 0, 0, 0, 0}},
		gpuSpec{metrics: hopper, values: []int{1755, 40, 25, 5, 15, 5, 1, 1, 0, 0, 0, 0, 0}, idleRow: func(i int) bool { return i%5 == 0 }})
	res := analyse(tr)
	got := titles(res.Findings)
	for _, w := range []string{"warning:SMs under-filled while the GPU works", "warning:PCIe link saturated", "info:Memory-bound phase: DRAM bandwidth near its peak", "info:GPU metrics summary"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in %s", w, got)
		}
	}
	if len(res.Findings) != 4 {
		t.Errorf("findings: %s", got)
	}
	for _, f := range res.Findings {
		switch f.Title {
		case "SMs under-filled while the GPU works":
			if m, _ := f.Metric("sm_active_busy_pct"); m.Value != 40 || f.Evidence[0].Device != 2 {
				t.Errorf("sm %v device %d", m.Value, f.Evidence[0].Device)
			}
			if m, _ := f.Metric("idle_samples_pct"); m.Value < 15 || m.Value > 25 {
				t.Errorf("idle %v", m.Value)
			}
		case "Memory-bound phase: DRAM bandwidth near its peak":
			if f.Evidence[0].Device != 0 {
				t.Errorf("dram on device %d", f.Evidence[0].Device)
			}
		case "PCIe link saturated":
			if f.Evidence[0].Device != 1 {
				t.Errorf("pcie on device %d", f.Evidence[0].Device)
			}
		case "GPU metrics summary":
			if !strings.Contains(f.Message, "NVLink") && !strings.Contains(f.Message, "DRAM read 49.6%") {
				t.Errorf("summary: %s", f.Message)
			}
		}
	}
}

// TestPlantedGEMMBound: tensor cores at 95 % on a bare-name (nsys 2021)
// export: the GEMM-bound note, nothing else but the summary.
func TestPlantedGEMMBound(t *testing.T) {
	tr := export(t, 100, gpuSpec{metrics: bare, values: []int{99, 93, 70, 95, 35, 10, 2, 1}})
	res := analyse(tr)
	if got := titles(res.Findings); got != "info:GEMM-bound phase: tensor cores saturated | info:GPU metrics summary" {
		t.Errorf("findings: %s", got)
	}
}

// TestPlantedNVLink: NVLink RX request and response user data add up to 80 %.
func TestPlantedNVLink(t *testing.T) {
	tr := export(t, 100, gpuSpec{metrics: hopper, values: []int{1755, 88, 50, 60, 30, 10, 1, 1, 0, 40, 40, 9, 20}})
	res := analyse(tr)
	if got := titles(res.Findings); got != "info:GPU metrics summary | info:NVLink near saturation" {
		t.Errorf("findings: %s", got)
	}
}

// TestCleanHealthy: SMs 92 %, tensor 55 %, DRAM 40 %, quiet links: the
// summary only.
func TestCleanHealthy(t *testing.T) {
	tr := export(t, 100, gpuSpec{metrics: hopper, values: []int{1755, 92, 60, 55, 30, 10, 2, 2, 0, 3, 3, 1, 3}})
	res := analyse(tr)
	if got := titles(res.Findings); got != "info:GPU metrics summary" {
		t.Errorf("findings: %s", got)
	}
	if !strings.Contains(res.Findings[0].Message, "SMs active 92%") {
		t.Errorf("summary: %s", res.Findings[0].Message)
	}
}

// TestNotMeasurable: an export whose metrics are only clocks.
func TestNotMeasurable(t *testing.T) {
	tr := export(t, 10, gpuSpec{metrics: []string{"GPC Clock Frequency [MHz]", "SYS Clock Frequency [MHz]"}, values: []int{1755, 1600}})
	res := analyse(tr)
	if len(res.Findings) != 0 || len(res.NotMeasurable) != 1 || !strings.Contains(res.NotMeasurable[0].Reason, "no SM") {
		t.Errorf("findings %s, not measurable %v", titles(res.Findings), res.NotMeasurable)
	}
}

// TestPerStep: with four ProfilerStep ranges the steady state starts after
// the first step and the summary gives the spread of SMs active per step
// (steps 2-4 at 90 %, except a slow one at 30 %: the rows of samples
// 100-149).
func TestPerStep(t *testing.T) {
	tr := export(t, 200, gpuSpec{metrics: hopper, values: []int{1755, 90, 60, 55, 30, 10, 2, 2, 0, 3, 3, 1, 3}})
	// Samples are 100 µs apart from 1 ms; a step spans 50 samples.
	for i, s := range tr.Samples {
		if s.Time >= 1e6+100*1e5 && s.Time < 1e6+150*1e5 && strings.HasPrefix(tr.Str(tr.Counters[s.Series].Name), "SMs Active") {
			tr.Samples[i].Value = 30
		}
	}
	th := tr.ThreadFor(1, 1)
	name := tr.Intern("ProfilerStep#1")
	for k := 0; k < 4; k++ {
		start := model.Time(1e6 + int64(k)*50*1e5)
		tr.Ranges = append(tr.Ranges, model.Range{Start: start, End: start + 50*1e5 - 1, Name: name, Thread: th, Track: tr.InternTrack(model.CPUTrack), Kind: model.RangeStep})
	}
	tr.Finalize()
	res := analyse(tr)
	// The slow step pulls the steady mean to 70 %: under-filled (info).
	if got := titles(res.Findings); got != "info:GPU metrics summary | info:SMs under-filled while the GPU works" {
		t.Errorf("findings: %s", got)
	}
	sum := res.Findings[0]
	if !strings.Contains(sum.Message, "steps 2 to 4 of 4") || !strings.Contains(sum.Message, "SMs active per step 30% to 90% over 3 steps") {
		t.Errorf("summary: %s", sum.Message)
	}
}
