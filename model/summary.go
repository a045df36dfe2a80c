package model

import (
	"math"
	"sort"
)

// Stats are the order statistics of a set of durations (ns). Percentiles use
// linear interpolation between closest ranks (Hyndman & Fan type 7: DuckDB's
// quantile_cont, numpy's and pandas' default): for sorted x[0..n-1] the
// p-quantile is x[h0] + (h-h0)·(x[h0+1]-x[h0]) with h = (n-1)·p, h0 = ⌊h⌋.
// Stddev is the sample standard deviation (n-1 in the denominator, as
// nsys stats and pandas report it); it is NaN (unknown) for n < 2.
type Stats struct {
	Count  int64
	Total  Duration
	Min    Duration
	Max    Duration
	Avg    float64
	Median float64
	P90    float64
	Stddev float64
}

// Quantile returns the p-quantile (0 ≤ p ≤ 1) of sorted values by linear
// interpolation (see Stats); NaN for no values.
func Quantile(sorted []int64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return float64(sorted[n-1])
	}
	return float64(sorted[lo]) + (h-float64(lo))*float64(sorted[lo+1]-sorted[lo])
}

// ComputeStats sorts d in place and returns its statistics. With no values
// every float field is NaN.
func ComputeStats(d []int64) Stats {
	s := Stats{Count: int64(len(d)), Avg: math.NaN(), Median: math.NaN(), P90: math.NaN(), Stddev: math.NaN()}
	if len(d) == 0 {
		return s
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	var total int64
	for _, v := range d {
		total += v
	}
	s.Total = Duration(total)
	s.Min, s.Max = Duration(d[0]), Duration(d[len(d)-1])
	s.Avg = float64(total) / float64(len(d))
	s.Median = Quantile(d, 0.5)
	s.P90 = Quantile(d, 0.9)
	if len(d) > 1 {
		// Two-pass sum of squared deviations: exact enough for ns values.
		var ss float64
		for _, v := range d {
			dv := float64(v) - s.Avg
			ss += dv * dv
		}
		s.Stddev = math.Sqrt(ss / float64(len(d)-1))
	}
	return s
}

// RangeSummary aggregates the annotated ranges (NVTX ranges, user
// annotations, profiler steps) of one (domain, name).
type RangeSummary struct {
	Name   string
	Domain string
	Kind   RangeKind
	Stats  Stats
	// GPU is the summed duration of GPU work (kernels, copies, sets)
	// launched by API calls that started inside an instance of the range on
	// the range's thread; -1 when the capture cannot tell (no correlation).
	GPU Duration
}

// APISummary aggregates the host API calls of one name.
type APISummary struct {
	Name   string
	Source APISource
	Stats  Stats
}

// SizeBuckets are the upper bounds (exclusive) of the copy size histogram;
// the last bucket is open.
var SizeBuckets = []int64{1 << 10, 64 << 10, 1 << 20, 16 << 20}

// SizeBucketLabels name the buckets of SizeBuckets plus the open last one.
var SizeBucketLabels = []string{"<1KiB", "1KiB-64KiB", "64KiB-1MiB", "1MiB-16MiB", ">=16MiB"}

// CopySummary aggregates the memory copies (or sets) of one kind.
type CopySummary struct {
	Kind  MemOpKind
	Count int64
	// Bytes sums the known sizes; -1 when no size is known.
	Bytes int64
	Total Duration
	// GBps is Bytes / Total of the copies with a known size, in 1e9 bytes
	// per second; NaN when unknown.
	GBps float64
	// Sizes counts copies per SizeBucketLabels bucket; Unsized those without a size.
	Sizes   []int64
	Unsized int64
}

// OpKernel is one kernel name launched under a CPU operator.
type OpKernel struct {
	Name  string
	Count int64
	GPU   Duration
}

// OpSummary is the GPU time of the kernels launched under one CPU operator
// name (the innermost operator: Kineto links each kernel to it by External id).
type OpSummary struct {
	Name     string
	Launches int64
	GPU      Duration
	// Kernels are the op's kernel names, most GPU time first (at most MaxOpKernels).
	Kernels []OpKernel
}

// MaxOpKernels bounds OpSummary.Kernels.
const MaxOpKernels = 5

// MemoryPoint is one sample of a device's allocator totals (-1 = unknown).
type MemoryPoint struct {
	Time      Time
	Allocated int64
	Reserved  int64
}

// MemorySummary is the allocator peak of one device of one rank.
type MemorySummary struct {
	Rank   int
	Device DeviceID
	// PeakAllocated and PeakReserved are -1 when unknown.
	PeakAllocated int64
	PeakReserved  int64
	Events        int64
	// Series is the allocator totals over time, reduced to at most
	// MaxMemoryPoints points (the maximum of each time bucket).
	Series []MemoryPoint
}

// MaxMemoryPoints bounds MemorySummary.Series.
const MaxMemoryPoints = 200

// TimelineBins is the number of bins of a DeviceTimeline.
const TimelineBins = 240

// DeviceTimeline is a device's GPU occupancy over its span, in equal bins:
// Busy[i] is the busy fraction (0..1) of bin i (union of kernels, copies,
// sets), Compute[i] the fraction under computation kernels (≤ Busy[i]), for
// drawing.
type DeviceTimeline struct {
	Rank       int
	Device     DeviceID
	Start, End Time
	Busy       []float64
	Compute    []float64
}

// StepSummary is one profiler step of one rank with the GPU busy time
// (union over the rank's devices) inside it.
type StepSummary struct {
	Rank       int
	Name       string
	Start, End Time
	GPUBusy    Duration
}

// Summary holds the summary tables of a report. A nil slice means the
// captures hold nothing of that kind (the table is not measurable).
type Summary struct {
	Ranges []RangeSummary
	API    []APISummary
	Copies []CopySummary
	Ops    []OpSummary
	Memory []MemorySummary
	// Timelines and Steps feed the HTML report's plots.
	Timelines []DeviceTimeline
	Steps     []StepSummary
}
