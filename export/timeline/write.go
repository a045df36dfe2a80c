package timeline

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/tracedx/tracedx/export/internal/pqwrite"
	"github.com/tracedx/tracedx/internal/outfile"
	"github.com/tracedx/tracedx/model"
)

// Format is an output file format.
type Format string

// Output formats.
const (
	Arrow   Format = "arrow"   // Arrow IPC file format (".arrow", a.k.a. Feather v2)
	Parquet Format = "parquet" // Parquet, zstd-compressed, with the Arrow schema stored
)

// Ext returns the file name extension of f, with the dot.
func (f Format) Ext() string {
	if f == Parquet {
		return ".parquet"
	}
	return ".arrow"
}

// DefaultBatchRows is the number of rows per record batch.
const DefaultBatchRows = 64 * 1024

// Options adjusts what is written.
type Options struct {
	// Range, when set, keeps only rows whose [start, end] intersects it
	// (closed bounds, on the set's clock: trace time plus the set offset).
	Range *model.Interval
	// BatchRows is the number of rows per record batch (DefaultBatchRows when 0).
	BatchRows int
	// Allocator allocates Arrow buffers (memory.DefaultAllocator when nil).
	Allocator memory.Allocator
}

func (o *Options) defaults() {
	if o.BatchRows <= 0 {
		o.BatchRows = DefaultBatchRows
	}
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
}

// source is one trace of the set with its rank and clock offset.
type source struct {
	t    *model.Trace
	rank int64
	off  int64
}

func sourcesOf(set *model.TraceSet) []source {
	out := make([]source, 0, len(set.Traces))
	for i, t := range set.Traces {
		var off int64
		if i < len(set.Offsets) {
			off = int64(set.Offsets[i])
		}
		out = append(out, source{t: t, rank: int64(t.Rank), off: off})
	}
	return out
}

// keep reports whether row i of t (in source s) passes the filters.
func (tab *table) keep(s *source, i int, win *model.Interval) bool {
	if tab.extra != nil && !tab.extra(s.t, i) {
		return false
	}
	if win == nil {
		return true
	}
	st, en := tab.span(s.t, i)
	return int64(st)+s.off <= int64(win.End) && int64(en)+s.off >= int64(win.Start)
}

// batcher turns one table of a set into record batches sharing one
// dictionary per string column.
type batcher struct {
	tab    *table
	schema *arrow.Schema
	mem    memory.Allocator
	srcs   []source
	win    *model.Interval
	// dicts[c] is the dictionary of column c (nil for non-dictionary columns).
	dicts []arrow.Array
	// remap[c][s][id] is the dictionary index of StringID id of source s in
	// column c (-1 = not seen).
	remap [][][]int32
}

func newBatcher(set *model.TraceSet, tab *table, opts Options) *batcher {
	b := &batcher{tab: tab, schema: tab.schema(), mem: opts.Allocator, srcs: sourcesOf(set), win: opts.Range}
	b.dicts = make([]arrow.Array, len(tab.cols))
	b.remap = make([][][]int32, len(tab.cols))
	for c := range tab.cols {
		col := &tab.cols[c]
		switch col.kind {
		case kEnum:
			b.dicts[c] = stringArray(b.mem, col.enumNames)
		case kString:
			b.dicts[c] = b.collect(c)
		}
	}
	return b
}

// collect builds the dictionary of string column c in order of first use.
func (b *batcher) collect(c int) arrow.Array {
	col := &b.tab.cols[c]
	index := map[string]int32{}
	var values []string
	b.remap[c] = make([][]int32, len(b.srcs))
	for s := range b.srcs {
		src := &b.srcs[s]
		rm := make([]int32, src.t.Strings.Len())
		for i := range rm {
			rm[i] = -1
		}
		n := b.tab.n(src.t)
		for i := 0; i < n; i++ {
			if !b.tab.keep(src, i, b.win) {
				continue
			}
			id := col.sid(row{t: src.t, i: i})
			if id == model.NoString || int(id) >= len(rm) || rm[id] >= 0 {
				continue
			}
			str := src.t.Str(id)
			v, ok := index[str]
			if !ok {
				v = int32(len(values))
				values = append(values, str)
				index[str] = v
			}
			rm[id] = v
		}
		b.remap[c][s] = rm
	}
	return stringArray(b.mem, values)
}

func stringArray(mem memory.Allocator, values []string) arrow.Array {
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.Reserve(len(values))
	for _, v := range values {
		sb.Append(v)
	}
	return sb.NewArray()
}

func (b *batcher) release() {
	for _, d := range b.dicts {
		if d != nil {
			d.Release()
		}
	}
}

// run calls emit with every record batch of at most batchRows rows; at least
// one batch (possibly empty) is emitted so that the file carries its
// dictionaries. emit must not keep the batch.
func (b *batcher) run(batchRows int, emit func(arrow.RecordBatch) error) (int64, error) {
	cols := b.tab.cols
	builders := make([]array.Builder, len(cols))
	for c := range cols {
		switch cols[c].kind {
		case kInt32:
			builders[c] = array.NewInt32Builder(b.mem)
		case kInt64:
			builders[c] = array.NewInt64Builder(b.mem)
		case kFloat:
			builders[c] = array.NewFloat64Builder(b.mem)
		default:
			builders[c] = array.NewInt32Builder(b.mem) // dictionary indices
		}
	}
	defer func() {
		for _, bl := range builders {
			bl.Release()
		}
	}()
	// Reserve each batch up front: growing builders row by row costs more
	// than the rows themselves.
	var upper int
	for s := range b.srcs {
		upper += b.tab.n(b.srcs[s].t)
	}
	reserve := func() {
		n := min(batchRows, upper)
		for _, bl := range builders {
			bl.Reserve(n)
		}
	}
	reserve()
	var total int64
	pending := 0
	flush := func() error {
		arrs := make([]arrow.Array, len(cols))
		for c := range cols {
			a := builders[c].NewArray()
			if b.dicts[c] != nil {
				d := array.NewDictionaryArray(dictType, a, b.dicts[c])
				a.Release()
				a = d
			}
			arrs[c] = a
		}
		rec := array.NewRecordBatch(b.schema, arrs, int64(pending))
		for _, a := range arrs {
			a.Release()
		}
		err := emit(rec)
		rec.Release()
		total += int64(pending)
		upper -= pending
		pending = 0
		reserve()
		return err
	}
	emitted := false
	for s := range b.srcs {
		src := &b.srcs[s]
		n := b.tab.n(src.t)
		for i := 0; i < n; i++ {
			if !b.tab.keep(src, i, b.win) {
				continue
			}
			r := row{t: src.t, i: i, rank: src.rank, off: src.off}
			for c := range cols {
				col := &cols[c]
				switch col.kind {
				case kInt32:
					v, ok := col.i64(r)
					if ok {
						builders[c].(*array.Int32Builder).Append(int32(v))
					} else {
						builders[c].AppendNull()
					}
				case kInt64:
					v, ok := col.i64(r)
					if ok {
						builders[c].(*array.Int64Builder).Append(v)
					} else {
						builders[c].AppendNull()
					}
				case kFloat:
					builders[c].(*array.Float64Builder).Append(col.f64(r))
				case kEnum:
					builders[c].(*array.Int32Builder).Append(int32(col.enum(r)))
				case kString:
					id := col.sid(r)
					rm := b.remap[c][s]
					if id == model.NoString || int(id) >= len(rm) || rm[id] < 0 {
						builders[c].AppendNull()
					} else {
						builders[c].(*array.Int32Builder).Append(rm[id])
					}
				}
			}
			pending++
			if pending >= batchRows {
				if err := flush(); err != nil {
					return total, err
				}
				emitted = true
			}
		}
	}
	if pending > 0 || !emitted {
		if err := flush(); err != nil {
			return total, err
		}
	}
	return total, nil
}

// WriteTable writes the named table of set to w in format f and returns the
// number of rows written.
func WriteTable(w io.Writer, set *model.TraceSet, name string, f Format, opts Options) (int64, error) {
	opts.defaults()
	tab := tableByName(name)
	if tab == nil {
		return 0, fmt.Errorf("timeline: unknown table %q", name)
	}
	b := newBatcher(set, tab, opts)
	defer b.release()
	switch f {
	case Arrow:
		iw, err := ipc.NewFileWriter(w, ipc.WithSchema(b.schema), ipc.WithAllocator(opts.Allocator))
		if err != nil {
			return 0, err
		}
		n, err := b.run(opts.BatchRows, iw.Write)
		if cerr := iw.Close(); err == nil {
			err = cerr
		}
		return n, err
	case Parquet:
		// Dictionary encoding only for the string columns: numeric columns
		// (mostly unique times and ids) would only fill a dictionary and fall
		// back to plain, at a large cost in time.
		popts := []parquet.WriterProperty{
			parquet.WithAllocator(opts.Allocator),
			parquet.WithCompression(compress.Codecs.Zstd),
			parquet.WithMaxRowGroupLength(1 << 20),
			parquet.WithCreatedBy("tracedx"),
			parquet.WithDictionaryDefault(false),
		}
		for i := range tab.cols {
			if c := &tab.cols[i]; c.kind == kString || c.kind == kEnum {
				popts = append(popts, parquet.WithDictionaryFor(c.name, true))
			}
		}
		props := parquet.NewWriterProperties(popts...)
		pw, err := pqwrite.New(w, b.schema, props, nil)
		if err != nil {
			return 0, err
		}
		n, err := b.run(opts.BatchRows, pw.Write)
		if cerr := pw.Close(); err == nil {
			err = cerr
		}
		return n, err
	}
	return 0, fmt.Errorf("timeline: unknown format %q (want arrow or parquet)", f)
}

// File is one written file.
type File struct {
	Table string
	Path  string
	Rows  int64
}

// WriteDir writes every table of set into dir (created if missing), one file
// per table named TABLE.arrow or TABLE.parquet. Each file is written to a
// temporary file in dir and renamed into place, so a reader never sees a
// partial file; a cancelled ctx stops the write and leaves no temporary file.
func WriteDir(ctx context.Context, dir string, set *model.TraceSet, f Format, opts Options) ([]File, error) {
	if f != Arrow && f != Parquet {
		return nil, fmt.Errorf("timeline: unknown format %q (want arrow or parquet)", f)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []File
	for _, tab := range tables {
		path := filepath.Join(dir, tab.name+f.Ext())
		var rows int64
		err := outfile.Write(ctx, path, outfile.Options{}, func(w io.Writer) error {
			bw := bufio.NewWriterSize(w, 1<<20)
			n, err := WriteTable(bw, set, tab.name, f, opts)
			rows = n
			if err != nil {
				return err
			}
			return bw.Flush()
		})
		if err != nil {
			return out, fmt.Errorf("writing %s: %w", path, err)
		}
		out = append(out, File{Table: tab.name, Path: path, Rows: rows})
	}
	return out, nil
}
