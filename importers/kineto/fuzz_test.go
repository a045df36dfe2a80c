package kineto

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/model"
)

// fuzzInput decodes arbitrary bytes into typed event fields.
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

func (f *fuzzInput) bool() bool { return f.byte()&1 == 1 }

// i64 reads a small value (-64..63) or, after a marker, a full 8-byte
// value or a device-wide stream, so that extremes are reachable.
func (f *fuzzInput) i64() int64 {
	switch b := f.byte(); b {
	case 0xFF:
		if len(f.data) < 8 {
			f.data = nil
			return -1
		}
		v := int64(binary.BigEndian.Uint64(f.data))
		f.data = f.data[8:]
		return v
	case 0xFE:
		return 4294967295
	default:
		return int64(b&0x7F) - 64
	}
}

func (f *fuzzInput) bytes() []byte {
	n := min(int(f.byte()%16), len(f.data))
	s := f.data[:n:n]
	f.data = f.data[n:]
	return s
}

// pick returns one of vs, or arbitrary bytes for the last choice.
func (f *fuzzInput) pick(vs ...string) []byte {
	i := int(f.byte()) % (len(vs) + 1)
	if i == len(vs) {
		return f.bytes()
	}
	return []byte(vs[i])
}

// num returns number text as the raw layer hands it over: integers,
// decimals, exponents, epoch-scale values and garbage.
func (f *fuzzInput) num() []byte {
	switch f.byte() % 6 {
	case 0:
		return nil // absent
	case 1:
		return []byte(strconv.FormatInt(f.i64(), 10))
	case 2:
		return []byte(strconv.FormatInt(f.i64(), 10) + ".5")
	case 3:
		return []byte("1712195495519689." + strconv.Itoa(int(f.byte())))
	case 4:
		return []byte(strconv.FormatInt(f.i64(), 10) + "e" + strconv.Itoa(int(f.byte()%40)-20))
	}
	return f.bytes()
}

func (f *fuzzInput) lane() laneVal {
	switch f.byte() % 4 {
	case 0:
		return laneVal{}
	case 1:
		return laneVal{kind: lnInt, n: f.i64()}
	case 2:
		return laneVal{kind: lnStr, s: f.pick("stream 7", "Spans", "", "2662278912", "-3")}
	}
	return laneVal{kind: lnBad}
}

var fuzzCats = []string{"cpu_op", "Operator", "user_annotation", "python_function", "gpu_user_annotation",
	"cuda_runtime", "cuda_driver", "mtia_runtime", "kernel", "mtia_ccp_events", "gpu_memcpy", "gpu_memset",
	"cuda_sync", "cpu_instant_event", "Trace", "ac2g", "fwdbwd", "cuda_profiler_range", "overhead"}

// fuzzEvent decodes one typed event.
func fuzzEvent(in *fuzzInput) event {
	ev := event{ph: "XXXXMiisft?"[in.byte()%11], phLen: 1}
	if in.byte()%16 == 0 {
		ev.phLen = int(in.byte() % 3)
	}
	if in.byte()%8 != 0 {
		ev.cat, ev.hasCat = in.pick(fuzzCats...), true
	}
	ev.name, ev.hasName = in.pick("ProfilerStep#1", "record_param_comms", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
		"Memcpy HtoD (Pageable -> Device)", "Memset (Device)", "cudaLaunchKernel", "hipLaunchKernel",
		"[memory]", "process_name", "thread_name", "cudaStreamWaitEvent"), true
	ev.pid, ev.tid = in.lane(), in.lane()
	ev.ts, ev.dur = in.num(), in.num()
	ev.tsStr, ev.durStr = in.byte()%16 == 0, in.byte()%16 == 0
	ev.id, ev.hasID = in.i64(), in.bool()
	if in.byte()%32 == 0 {
		ev.badType = "args"
	}
	a := &ev.a
	a.totalAlloc, a.totalRes = -1, -1
	a.corr, a.hasCorr = in.i64(), in.bool()
	a.ext, a.hasExt = in.i64(), in.bool()
	a.device, a.hasDevice = in.i64(), in.bool()
	a.stream, a.hasStream = in.i64(), in.bool()
	a.streamID, a.hasStreamID = in.i64(), in.bool()
	a.grid = [3]int32{int32(in.i64()), int32(in.i64()), int32(in.i64())}
	a.regs, a.smem = in.i64(), in.i64()
	a.bytes, a.hasBytes = in.i64(), in.bool()
	a.kind = in.pick("Dispatch Kernel", "HtoD", "")
	a.graphID = in.i64()
	a.collName, a.hasCollName = in.pick("allreduce", "all_gather", "broadcast"), in.bool()
	a.dtype = in.pick("Float", "BFloat16", "Half")
	a.pgName, a.hasPGName = in.bytes(), in.bool()
	a.nelems, a.hasNelems = in.i64(), in.bool()
	a.groupSize, a.hasGroupSize = in.i64(), in.bool()
	a.pgID, a.hasPGID = in.i64(), in.bool()
	a.rank, a.hasRank = in.i64(), in.bool()
	a.syncKind = in.pick("Stream Wait Event", "Event Sync", "")
	a.devType, a.hasDevType = in.i64(), in.bool()
	a.devID, a.hasDevID = in.i64(), in.bool()
	a.memBytes, a.hasMemBytes = in.i64(), in.bool()
	a.addr = in.i64()
	if in.bool() {
		a.totalAlloc, a.hasTotalAlloc = in.i64(), true
	}
	if in.bool() {
		a.totalRes, a.hasTotalRes = in.i64(), true
	}
	a.mName, a.hasMName = in.bytes(), in.bool()
	return ev
}

// FuzzBuild drives the mapping and the post-pass (events → model) with
// arbitrary typed events and no JSON: it must never panic, and the trace
// it makes must validate.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 8, 8, 1, 65, 2, 0, 1, 64, 1, 70, 1, 66, 3})
	f.Add(bytes.Repeat([]byte{0, 1, 8, 1, 1, 65, 1, 2, 1, 70, 1, 72, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}, 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := model.NewTrace("fuzz.json", model.FormatKineto)
		b := newBuilder(tr, importers.NewWarner(tr, importers.Options{MaxWarnings: 64}))
		in := &fuzzInput{data: data}
		if in.bool() {
			b.base, b.hasBase = in.i64(), true
		}
		for i := 0; len(in.data) > 0 && i < 2000; i++ {
			ev := fuzzEvent(in)
			b.handle(&ev, i, int64(i))
		}
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

// FuzzEvent drives the raw layer's event parser alone: any text gives an
// event or a syntax error, never a panic, and never reads past the text.
func FuzzEvent(f *testing.F) {
	f.Add([]byte(`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":"stream 7","ts":1.5,"dur":2,"args":{"correlation":3}}`))
	f.Add([]byte(`{"ph":"i","name":"[memory]","ts":"1","args":{"Total Allocated":-1,"Device Type":1,"Device Id":0}}`))
	f.Add([]byte(`{"ph":"M","name":"thread_name","pid":"1","tid":2,"args":{"name":"x\u00e9"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p eventParser
		var ev event
		c := cur{b: data}
		if err := p.parseEvent(&c, &ev); err != nil {
			return
		}
		if c.i > len(data) {
			t.Fatalf("read to %d of %d bytes", c.i, len(data))
		}
	})
}
