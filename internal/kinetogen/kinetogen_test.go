package kinetogen

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func sample() *model.Trace {
	b := fixture.New("gen", model.FormatKineto)
	b.T.Rank, b.T.WorldSize = 0, 2
	th := b.Thread(200, "thread 200 (python)")
	b.Range(th, model.RangeStep, "ProfilerStep#1", 0, 100)
	b.Range(th, model.RangeCPUOp, "aten::mm", 1, 20)
	b.Kernel(0, 7, "gemm", 10, 30, th, 2)
	b.Copy(0, 7, model.MemHtoD, model.MemPageable, model.MemDevice, 4096, 40, 45, th, "cudaMemcpyAsync", 30, 32)
	b.Collective(0, 20, model.CollAllReduce, 1<<20, 50, 80, th, 35)
	b.T.MemEvents = append(b.T.MemEvents, model.MemEvent{Time: fixture.US(3), Bytes: 512, Thread: th, Device: 0, TotalAllocated: 512, TotalReserved: -1})
	b.T.Capture = model.Interval{Start: 0, End: fixture.US(100)}
	return b.Build()
}

func TestWriteValidJSON(t *testing.T) {
	for _, l := range []Layout{{}, {BareArray: true}, {HeaderAfter: true, TS: RelativeBase}, {TS: FloatEpochNs, Legacy: true, DupMeta: 2, Unsorted: true}, {NoMetadata: true}} {
		var a, b bytes.Buffer
		if err := Write(&a, sample(), l); err != nil {
			t.Fatal(err)
		}
		if err := Write(&b, sample(), l); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%+v: output not deterministic", l)
		}
		var v any
		if err := json.Unmarshal(a.Bytes(), &v); err != nil {
			t.Errorf("%+v: invalid JSON: %v\n%s", l, err, a.String())
		}
	}
}

func TestShow(t *testing.T) {
	if testing.Verbose() {
		var a bytes.Buffer
		Write(&a, sample(), Layout{HeaderAfter: true, TS: RelativeBase})
		t.Log(a.String())
	}
}
