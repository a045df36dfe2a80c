package nsys

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/tracedx/tracedx/model"
)

// Metrics and memory: GPU_METRICS with its definitions, and
// CUDA_GPU_MEMORY_USAGE_EVENTS.

var gpuInTypeName = regexp.MustCompile(`(?i)\bGPU\s*#?\s*(\d+)`)
var unitSuffix = regexp.MustCompile(`\[([^\]]*)\]\s*$`)

func (b *builder) addMetricDef(row int, r *metricDefRow) {
	key := [2]int64{r.TypeID, r.MetricID}
	if _, ok := b.metricSeries[key]; ok {
		return
	}
	dev := model.NoDevice
	if m := gpuInTypeName.FindStringSubmatch(r.TypeName); m != nil {
		// "GPU N" is taken to be TARGET_INFO_GPU.id (unverified: no real
		// export with GPU metrics was available), mapped to its cuDevice.
		if n, err := strconv.ParseInt(m[1], 10, 32); err == nil {
			dev = model.DeviceID(n)
			if cu, ok := b.gpuByID[n]; ok && cu >= 0 && cu <= math.MaxInt32 {
				dev = model.DeviceID(cu)
			}
		}
	} else if len(b.gpus) == 1 {
		cu := b.gpus[0].CuDevice
		if cu < 0 {
			cu = b.gpus[0].ID
		}
		dev = model.DeviceID(clamp32(cu))
	}
	unit := ""
	if m := unitSuffix.FindStringSubmatch(r.MetricName); m != nil {
		unit = m[1]
	}
	name := r.MetricName
	if name == "" {
		name = fmt.Sprintf("metric %d", r.MetricID)
	}
	b.metricSeries[key] = int32(len(b.t.Counters))
	b.t.Counters = append(b.t.Counters, model.CounterSeries{Name: b.t.Intern(name), Unit: b.t.Intern(unit), Device: dev})
}

func (b *builder) metric(row int, r *metricRow) {
	if !b.inRange(tGPUMetrics, row, r.Timestamp, r.Timestamp) {
		return
	}
	key := [2]int64{r.TypeID, r.MetricID}
	s, ok := b.metricSeries[key]
	if !ok {
		if !b.metricWarned[key] {
			b.metricWarned[key] = true
			b.warnRow(tGPUMetrics, row, "metric (typeId %d, metricId %d) not in %s", r.TypeID, r.MetricID, tGPUMetricsInfo)
		}
		return
	}
	if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) {
		b.warnRow(tGPUMetrics, row, "metric value is not a number")
		return
	}
	b.t.Samples = append(b.t.Samples, model.CounterSample{Time: model.Time(r.Timestamp), Value: r.Value, Series: s})
	b.seeTime(r.Timestamp)
}

func (b *builder) memUsage(row int, r *memUsageRow) {
	if !b.inRange(tMemUsage, row, r.Start, r.Start) {
		return
	}
	var sign int64
	switch r.Op {
	case 0:
		sign = 1
	case 1:
		sign = -1
	default:
		b.warnRow(tMemUsage, row, "unknown memoryOperationType %d", r.Op)
		return
	}
	if r.Bytes < 0 {
		b.warnRow(tMemUsage, row, "negative byte count %d", r.Bytes)
		return
	}
	pid := pidOf(r.GlobalPid)
	dev, ok := b.activityDevice(tMemUsage, row, pid, r.DeviceID)
	if !ok {
		return
	}
	key := [2]int64{pid, int64(dev)}
	b.memTotals[key] += sign * r.Bytes
	b.memDevTotal[dev] += sign * r.Bytes
	b.t.MemEvents = append(b.t.MemEvents, model.MemEvent{
		Time: model.Time(r.Start), Bytes: sign * r.Bytes, Addr: uint64(r.Address),
		TotalAllocated: b.memTotals[key], TotalReserved: -1,
		Thread: model.NoThread, Device: dev,
	})
	s, ok := b.memSeries[dev]
	if !ok {
		s = int32(len(b.t.Counters))
		b.memSeries[dev] = s
		b.t.Counters = append(b.t.Counters, model.CounterSeries{Name: b.t.Intern("CUDA memory in use"), Unit: b.t.Intern("bytes"), Device: dev})
	}
	b.t.Samples = append(b.t.Samples, model.CounterSample{Time: model.Time(r.Start), Value: float64(b.memDevTotal[dev]), Series: s})
	b.seeTime(r.Start)
}

// ---- Python ----
