package parquet

import "github.com/apache/arrow-go/v18/arrow"

// DatasetVersion is stored in each file's key-value metadata
// ("tracedx.dataset_version"); it changes when a column changes meaning.
const DatasetVersion = "1"

// Table names (file name stems).
const (
	TableInputs   = "inputs"
	TableMetrics  = "metrics"
	TableFindings = "findings"
	TableKernels  = "kernels"
)

// Tables lists the tables in the order they are written.
var Tables = []string{TableInputs, TableMetrics, TableFindings, TableKernels, TableRanges, TableAPI, TableCopies, TableOps, TableMemory, TableSteps}

var dictString = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

func dict(name string, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: dictString, Nullable: nullable}
}

func field(name string, t arrow.DataType, nullable bool) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: nullable}
}

// Column indices; each must match the schema below.
const (
	inPath = iota
	inDigest
	inFormat
	inStatus
	inError
	inRank
	inBytes
	inGatesFailed
	inFindings
)

// InputsSchema: one row per input.
var InputsSchema = arrow.NewSchema([]arrow.Field{
	dict("input", false),
	field("digest", arrow.BinaryTypes.String, false),
	dict("format", true),
	dict("status", false),
	field("error", arrow.BinaryTypes.String, true),
	field("rank", arrow.PrimitiveTypes.Int32, true),
	field("bytes", arrow.PrimitiveTypes.Int64, false),
	field("gates_failed", arrow.PrimitiveTypes.Int32, false),
	field("findings", arrow.PrimitiveTypes.Int32, false),
}, nil)

const (
	mInput = iota
	mDevice
	mScope
	mMetric
	mValue
)

// MetricsSchema: one row per metric sample of an input.
var MetricsSchema = arrow.NewSchema([]arrow.Field{
	dict("input", false),
	dict("device", true),
	dict("scope", true),
	dict("metric", false),
	field("value", arrow.PrimitiveTypes.Float64, false),
}, nil)

const (
	fInput = iota
	fRule
	fSeverity
	fLayer
	fTitle
	fMessage
	fConfidence
	fEvRank
	fEvDevice
	fEvStream
	fEvStart
	fEvEnd
)

// FindingsSchema: one row per finding; ev_* is the first evidence window
// (null when the finding has no evidence).
var FindingsSchema = arrow.NewSchema([]arrow.Field{
	dict("input", false),
	dict("rule", false),
	dict("severity", false),
	dict("layer", false),
	dict("title", false),
	field("message", arrow.BinaryTypes.String, false),
	dict("confidence", false),
	field("ev_rank", arrow.PrimitiveTypes.Int32, true),
	field("ev_device", arrow.PrimitiveTypes.Int32, true),
	field("ev_stream", arrow.PrimitiveTypes.Int64, true),
	field("ev_start_ns", arrow.PrimitiveTypes.Int64, true),
	field("ev_end_ns", arrow.PrimitiveTypes.Int64, true),
}, nil)

const (
	kInput = iota
	kName
	kCount
	kTotal
	kMin
	kMax
	kAvg
	kMedian
	kP90
	kStddev
	kClass
	kDevice
)

// KernelsSchema: one row per kernel name of an input.
var KernelsSchema = arrow.NewSchema([]arrow.Field{
	dict("input", false),
	dict("kernel", false),
	field("count", arrow.PrimitiveTypes.Int64, false),
	field("total_ns", arrow.PrimitiveTypes.Int64, false),
	field("min_ns", arrow.PrimitiveTypes.Int64, false),
	field("max_ns", arrow.PrimitiveTypes.Int64, false),
	field("avg_ns", arrow.PrimitiveTypes.Float64, true),
	field("median_ns", arrow.PrimitiveTypes.Float64, true),
	field("p90_ns", arrow.PrimitiveTypes.Float64, true),
	field("stddev_ns", arrow.PrimitiveTypes.Float64, true),
	dict("class", true),
	field("device", arrow.PrimitiveTypes.Int32, true),
}, nil)

// SchemaOf returns the schema of a table.
func SchemaOf(table string) *arrow.Schema {
	switch table {
	case TableInputs:
		return InputsSchema
	case TableMetrics:
		return MetricsSchema
	case TableFindings:
		return FindingsSchema
	case TableKernels:
		return KernelsSchema
	case TableRanges:
		return RangesSchema
	case TableAPI:
		return APISchema
	case TableCopies:
		return CopiesSchema
	case TableOps:
		return OpsSchema
	case TableMemory:
		return MemorySchema
	case TableSteps:
		return StepsSchema
	}
	return nil
}
