// Package parquettest reads Parquet files back for tests. It is apart from
// export/parquet so that the binary does not link pqarrow (which imports
// Arrow Flight, gRPC and protobuf).
package parquettest

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ReadText reads a dataset file back as one line per row
// ("col=value|col=value", nulls as "col=<null>"), for tests and debugging.
// mem may be nil.
func ReadText(path string, mem memory.Allocator) ([]string, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 4096}, mem)
	if err != nil {
		return nil, err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	var out []string
	for rr.Next() {
		rec := rr.RecordBatch()
		sc := rec.Schema()
		for i := 0; i < int(rec.NumRows()); i++ {
			var b strings.Builder
			for c := 0; c < int(rec.NumCols()); c++ {
				if c > 0 {
					b.WriteByte('|')
				}
				b.WriteString(sc.Field(c).Name)
				b.WriteByte('=')
				col := rec.Column(c)
				switch {
				case col.IsNull(i):
					b.WriteString("<null>")
				default:
					if d, ok := col.(*array.Dictionary); ok {
						b.WriteString(d.Dictionary().ValueStr(d.GetValueIndex(i)))
					} else {
						b.WriteString(col.ValueStr(i))
					}
				}
			}
			out = append(out, b.String())
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
