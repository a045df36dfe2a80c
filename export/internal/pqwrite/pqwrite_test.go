package pqwrite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/tracedx/tracedx/export/parquet/parquettest"
)

// TestRoundTrip: every supported type, nulls included, reads back as
// written (through pqarrow, as Arrow readers do), and the Arrow schema
// (dictionary types) is restored from ARROW:schema.
func TestRoundTrip(t *testing.T) {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: dict, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 0, 3}, []bool{true, false, true})
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{-5, 1 << 40, 7}, nil)
	b.Field(2).(*array.Float64Builder).AppendValues([]float64{0.5, 2, -1}, nil)
	b.Field(3).(*array.StringBuilder).AppendValues([]string{"a", "", "c|d"}, []bool{true, true, false})
	db := b.Field(4).(*array.BinaryDictionaryBuilder)
	db.AppendString("sgemm")
	db.AppendNull()
	db.AppendString("sgemm")
	rec := b.NewRecordBatch()
	defer rec.Release()

	path := filepath.Join(t.TempDir(), "t.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(f, sc, parquet.NewWriterProperties(), map[string]string{"b": "2", "a": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines, err := parquettest.ReadText(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{"i32=1", "i32=<null>", "i64=1099511627776", "f64=-1", "s=<null>", "d=sgemm", "d=<null>"} {
		if !strings.Contains(got, want) {
			t.Errorf("read back lacks %q:\n%s", want, got)
		}
	}
}
