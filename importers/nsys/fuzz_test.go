package nsys

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/model"
)

// fuzzInput decodes arbitrary bytes into row values.
type fuzzInput struct {
	data []byte
}

func (f *fuzzInput) byte() byte {
	if len(f.data) == 0 {
		return 0
	}
	b := f.data[0]
	f.data = f.data[1:]
	return b
}

// i64 reads a small value (one byte, -64..63) or, after a 0xFF or 0xFE
// marker, a full or a time-like value, so that both ordinary and extreme
// values are reachable.
func (f *fuzzInput) i64() int64 {
	b := f.byte()
	switch b {
	case 0xFF:
		if len(f.data) < 8 {
			f.data = nil
			return -1
		}
		v := int64(binary.BigEndian.Uint64(f.data))
		f.data = f.data[8:]
		return v
	case 0xFE:
		return 281546145660928 + int64(f.byte()) // a globalPid / globalTid
	case 0xFD:
		return 0xFFFFFFFF
	}
	return int64(b&0x7F) - 64
}

func (f *fuzzInput) str() string {
	n := int(f.byte() % 24)
	if n > len(f.data) {
		n = len(f.data)
	}
	s := string(f.data[:n])
	f.data = f.data[n:]
	return s
}

// feed drives the builder with rows decoded from data, in any order.
func feed(b *builder, data []byte) {
	in := &fuzzInput{data: data}
	tables := []string{tKernel, tRuntime, tNVTX, tOSRT, tGPUMetrics, tMemUsage, tGraphTrace, tMemcpy}
	for op := 0; len(in.data) > 0 && op < 4000; op++ {
		row := op + 1
		switch in.byte() % 22 {
		case 0:
			b.addString(in.i64(), in.str())
		case 1:
			tab := tEnumMemcpy
			if in.byte()%2 == 1 {
				tab = tEnumMemKind
			}
			b.addEnum(tab, in.i64(), in.str())
		case 2:
			g := gpuRow{ID: in.i64(), CuDevice: in.i64(), Name: in.str(), SMs: in.i64(), Memory: in.i64(),
				Bandwidth: float64(in.i64()), Major: in.i64(), Minor: in.i64(), Bus: in.str(), HasCompute: in.byte()%2 == 0}
			b.addGPU(row, &g)
		case 3:
			b.addCUDADevice(row, &cudaDeviceRow{GPUID: in.i64(), CudaID: in.i64(), PID: in.i64()})
		case 4:
			b.addThreadName(row, &threadNameRow{GlobalTid: in.i64(), NameID: in.i64()})
		case 5:
			b.addProcess(row, &processRow{GlobalPid: in.i64(), PID: in.i64(), Name: in.str()})
		case 6:
			b.addCallchainFrame(row, &callchainRow{ID: in.i64(), Symbol: in.i64(), Module: in.i64(), Depth: in.i64()})
		case 7:
			tab := tRuntime
			if in.byte()%4 == 0 {
				tab = tDriver
			}
			b.runtime(tab, row, &runtimeRow{Start: in.i64(), End: in.i64(), EventClass: in.i64(), GlobalTid: in.i64(),
				Correlation: in.i64(), NameID: in.i64()})
		case 8:
			k := kernelRow{Start: in.i64(), End: in.i64(), DeviceID: in.i64(), StreamID: in.i64(), Correlation: in.i64(),
				GlobalPid: in.i64(), Demangled: in.i64(), Short: in.i64(), Registers: in.i64(),
				Grid: [3]int64{in.i64(), in.i64(), in.i64()}, Block: [3]int64{in.i64(), in.i64(), in.i64()},
				SharedMem: in.i64(), GraphID: in.i64(), GraphNodeID: in.i64()}
			b.kernel(row, &k)
		case 9:
			b.graphTrace(row, &graphTraceRow{Start: in.i64(), End: in.i64(), DeviceID: in.i64(), StreamID: in.i64(),
				Correlation: in.i64(), GlobalPid: in.i64(), GraphID: in.i64()})
		case 10:
			b.memcpy(row, &memcpyRow{Start: in.i64(), End: in.i64(), DeviceID: in.i64(), StreamID: in.i64(), Correlation: in.i64(),
				GlobalPid: in.i64(), Bytes: in.i64(), CopyKind: in.i64(), SrcKind: in.i64(), DstKind: in.i64()})
		case 11:
			b.memset(row, &memsetRow{Start: in.i64(), End: in.i64(), DeviceID: in.i64(), StreamID: in.i64(), Correlation: in.i64(),
				GlobalPid: in.i64(), Bytes: in.i64(), MemKind: in.i64()})
		case 12:
			b.sync(row, &syncRow{Start: in.i64(), End: in.i64(), DeviceID: in.i64(), StreamID: in.i64(), Correlation: in.i64(),
				GlobalPid: in.i64(), SyncType: in.i64()})
		case 13:
			n := nvtxRow{Start: in.i64(), End: in.i64(), EndValid: in.byte()%3 != 0, EventType: []int64{33, 34, 39, 59, 60, 75, 7}[in.byte()%7],
				GlobalTid: in.i64(), TextID: in.i64(), DomainID: in.i64()}
			if in.byte()%2 == 0 {
				n.Text, n.TextValid = in.str(), true
			}
			b.nvtx(row, &n)
		case 14:
			b.osrt(row, &osrtRow{Start: in.i64(), End: in.i64(), EventClass: in.i64(), GlobalTid: in.i64(), NameID: in.i64(),
				CallchainID: in.i64()})
		case 15:
			b.addMetricDef(row, &metricDefRow{TypeID: in.i64(), MetricID: in.i64(), TypeName: in.str(), MetricName: in.str()})
		case 16:
			b.metric(row, &metricRow{Timestamp: in.i64(), TypeID: in.i64(), MetricID: in.i64(), Value: float64(in.i64()) / 3})
		case 17:
			b.memUsage(row, &memUsageRow{Start: in.i64(), GlobalPid: in.i64(), DeviceID: in.i64(), Address: in.i64(),
				Bytes: in.i64(), MemKind: in.i64(), Op: in.i64()})
		case 18:
			b.gil("PYTHON_GIL_EVENTS", row, &gilRow{Start: in.i64(), End: in.i64(), GlobalTid: in.i64(), State: in.str()})
		case 19:
			b.addMeta([]string{"EXPORT_PRODUCT_VERSION", "EXPORT_SCHEMA_VERSION", "EXPORT_PARAM_TIME_NORMALIZE", "X"}[in.byte()%4], in.str())
		case 20:
			b.setSessionStart(in.i64())
			b.setDuration(in.i64())
		case 21:
			tab := tables[int(in.byte())%len(tables)]
			b.present[tab] = true
			b.rows[tab]++
		}
	}
}

// FuzzBuild drives the build step (rows → model) with arbitrary rows, no
// SQLite: it must never panic, and the trace it makes must validate.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 65, 5, 'k', 'e', 'r', 'n', '1', 8, 64, 80, 64, 71, 64, 0xFE, 1, 65, 65, 72, 64, 64, 65, 65, 65, 65, 65, 65, 64, 64, 64})
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := model.NewTrace("fuzz.sqlite", model.FormatNsys)
		b := newBuilder(tr, importers.NewWarner(tr, importers.Options{MaxWarnings: 64}))
		feed(b, data)
		b.finish()
		if err := tr.Validate(); err != nil {
			t.Fatalf("invalid trace: %v", err)
		}
		var buf bytes.Buffer
		if err := tr.Dump(&buf); err != nil {
			t.Fatal(err)
		}
	})
}
