package parquet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/tracedx/tracedx/export/internal/pqwrite"
	"github.com/tracedx/tracedx/internal/outfile"
)

// FlushRows is the most rows a table keeps in its builders before it writes
// them out as one record batch (one row group).
const FlushRows = 64 * 1024

// FileName returns a table's file name: "findings.parquet", or with a shard
// suffix "findings-shard-0-of-3.parquet".
func FileName(table, suffix string) string {
	if suffix == "" {
		return table + ".parquet"
	}
	return table + "-" + suffix + ".parquet"
}

// ShardSuffix names shard i of n ("shard-0-of-3"); "" when n <= 1.
func ShardSuffix(i, n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf("shard-%d-of-%d", i, n)
}

// Writer writes the dataset tables into a folder.
type Writer struct {
	dir    string
	suffix string
	mem    memory.Allocator
	tables []*table
	closed bool
	// flushRows is FlushRows except in tests.
	flushRows int
}

type table struct {
	name  string
	final string
	out   *outfile.File
	fw    *pqwrite.Writer
	rb    *array.RecordBuilder
	rows  int
}

// NewWriter starts the tables in dir (created when missing). suffix is
// added to the file names (see ShardSuffix). mem may be nil (Go allocator).
func NewWriter(dir, suffix string, mem memory.Allocator) (*Writer, error) {
	return NewTablesWriter(dir, suffix, mem, Tables)
}

// NewTablesWriter is NewWriter for a subset of the tables (e.g.
// SummaryTables beside an exported timeline).
func NewTablesWriter(dir, suffix string, mem memory.Allocator, tables []string) (*Writer, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &Writer{dir: dir, suffix: suffix, mem: mem, flushRows: FlushRows}
	// Parquet dictionary pages only for the dictionary-typed (name)
	// columns: on unique values (times, digests, messages) the encoder
	// would fill a dictionary and fall back to plain, at a cost.
	wprops := []pq.WriterProperty{
		pq.WithCompression(compress.Codecs.Zstd),
		pq.WithDictionaryDefault(false),
		pq.WithCreatedBy("tracedx"),
		pq.WithAllocator(mem),
	}
	for _, name := range tables {
		for _, f := range SchemaOf(name).Fields() {
			if f.Type.ID() == arrow.DICTIONARY {
				wprops = append(wprops, pq.WithDictionaryFor(f.Name, true))
			}
		}
	}
	props := pq.NewWriterProperties(wprops...)
	for _, name := range tables {
		final := filepath.Join(dir, FileName(name, suffix))
		out, err := outfile.Create(context.Background(), final, outfile.Options{})
		if err != nil {
			w.Abort()
			return nil, err
		}
		schema := SchemaOf(name)
		fw, err := pqwrite.New(out, schema, props, map[string]string{"tracedx.dataset_version": DatasetVersion})
		if err != nil {
			out.Abort()
			w.Abort()
			return nil, fmt.Errorf("parquet %s: %w", name, err)
		}
		w.tables = append(w.tables, &table{name: name, final: final, out: out, fw: fw, rb: array.NewRecordBuilder(mem, schema)})
	}
	return w, nil
}

// Paths returns the final paths of the table files.
func (w *Writer) Paths() []string {
	out := make([]string, len(w.tables))
	for i, t := range w.tables {
		out[i] = t.final
	}
	return out
}

// Add appends one input's rows to every table.
func (w *Writer) Add(r *Rows) error {
	if w.closed {
		return errors.New("parquet: writer closed")
	}
	in := r.Input
	for _, t := range w.tables {
		switch t.name {
		case TableInputs:
			b := t.rb
			appendDict(b.Field(inPath), in.Path)
			b.Field(inDigest).(*array.StringBuilder).Append(in.Digest)
			appendDictOrNull(b.Field(inFormat), in.Format)
			appendDict(b.Field(inStatus), in.Status)
			appendStringOrNull(b.Field(inError), in.Error)
			if in.Rank < 0 {
				b.Field(inRank).AppendNull()
			} else {
				b.Field(inRank).(*array.Int32Builder).Append(int32(in.Rank))
			}
			b.Field(inBytes).(*array.Int64Builder).Append(in.Bytes)
			b.Field(inGatesFailed).(*array.Int32Builder).Append(int32(in.GatesFailed))
			b.Field(inFindings).(*array.Int32Builder).Append(int32(in.Findings))
			t.rows++
		case TableMetrics:
			b := t.rb
			for _, m := range r.Metrics {
				appendDict(b.Field(mInput), in.Path)
				appendDictOrNull(b.Field(mDevice), m.Device)
				appendDictOrNull(b.Field(mScope), m.Scope)
				appendDict(b.Field(mMetric), m.Name)
				b.Field(mValue).(*array.Float64Builder).Append(m.Value)
			}
			t.rows += len(r.Metrics)
		case TableFindings:
			b := t.rb
			for _, f := range r.Findings {
				appendDict(b.Field(fInput), in.Path)
				appendDict(b.Field(fRule), f.Rule)
				appendDict(b.Field(fSeverity), f.Severity)
				appendDict(b.Field(fLayer), f.Layer)
				appendDict(b.Field(fTitle), f.Title)
				b.Field(fMessage).(*array.StringBuilder).Append(f.Message)
				appendDict(b.Field(fConfidence), f.Confidence)
				if f.HasEvidence {
					b.Field(fEvRank).(*array.Int32Builder).Append(f.EvRank)
					if f.EvDevice < 0 {
						b.Field(fEvDevice).AppendNull()
					} else {
						b.Field(fEvDevice).(*array.Int32Builder).Append(f.EvDevice)
					}
					if f.EvStream < 0 {
						b.Field(fEvStream).AppendNull()
					} else {
						b.Field(fEvStream).(*array.Int64Builder).Append(f.EvStream)
					}
					b.Field(fEvStart).(*array.Int64Builder).Append(f.EvStartNS)
					b.Field(fEvEnd).(*array.Int64Builder).Append(f.EvEndNS)
				} else {
					for _, c := range []int{fEvRank, fEvDevice, fEvStream, fEvStart, fEvEnd} {
						b.Field(c).AppendNull()
					}
				}
			}
			t.rows += len(r.Findings)
		case TableKernels:
			b := t.rb
			for _, k := range r.Kernels {
				appendDict(b.Field(kInput), in.Path)
				appendDict(b.Field(kName), k.Name)
				b.Field(kCount).(*array.Int64Builder).Append(k.Count)
				b.Field(kTotal).(*array.Int64Builder).Append(k.TotalNS)
				b.Field(kMin).(*array.Int64Builder).Append(k.MinNS)
				b.Field(kMax).(*array.Int64Builder).Append(k.MaxNS)
				appendF(b.Field(kAvg), k.AvgNS)
				appendF(b.Field(kMedian), k.MedianNS)
				appendF(b.Field(kP90), k.P90NS)
				appendF(b.Field(kStddev), k.StddevNS)
				appendDictOrNull(b.Field(kClass), k.Class)
				if k.Device == nil {
					b.Field(kDevice).AppendNull()
				} else {
					b.Field(kDevice).(*array.Int32Builder).Append(*k.Device)
				}
			}
			t.rows += len(r.Kernels)
		default:
			t.rows += appendSummary(t, in.Path, r)
		}
		if t.rows >= w.flushRows {
			if err := t.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func appendDict(b array.Builder, s string) {
	// AppendString only fails on a type mismatch, which the schema rules out.
	_ = b.(*array.BinaryDictionaryBuilder).AppendString(s)
}

func appendDictOrNull(b array.Builder, s string) {
	if s == "" {
		b.AppendNull()
		return
	}
	appendDict(b, s)
}

func appendStringOrNull(b array.Builder, s string) {
	if s == "" {
		b.AppendNull()
		return
	}
	b.(*array.StringBuilder).Append(s)
}

func (t *table) flush() error {
	if t.rows == 0 {
		return nil
	}
	rec := t.rb.NewRecordBatch()
	defer rec.Release()
	t.rows = 0
	if err := t.fw.Write(rec); err != nil {
		return fmt.Errorf("parquet %s: %w", t.name, err)
	}
	return nil
}

// Close flushes every table, closes the files and renames them into place.
// On error no final file is left half-written (temporary files are removed).
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	var firstErr error
	for _, t := range w.tables {
		err := t.flush()
		t.rb.Release()
		if cerr := t.fw.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = t.out.Commit() // sync, rename into place
		} else {
			t.out.Abort()
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if firstErr == nil {
		firstErr = syncDir(w.dir)
	}
	return firstErr
}

// Abort drops everything written so far.
func (w *Writer) Abort() {
	w.closed = true
	for _, t := range w.tables {
		t.rb.Release()
		t.fw.Close()
		t.out.Abort()
	}
	w.tables = nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	d.Sync() // best effort: not every filesystem supports it
	return d.Close()
}
