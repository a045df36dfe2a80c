package model

import (
	"testing"
	"unsafe"
)

// The event tables are most of a big trace's memory (millions of rows): a
// field added to a row costs megabytes. Fields that repeat across rows are
// interned (Trace.Configs, Trace.RangeTracks, Trace.APIIdents); keep the rows from growing
// back silently.
func TestRowSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, most uintptr
	}{
		{"Kernel", unsafe.Sizeof(Kernel{}), 48},
		{"Range", unsafe.Sizeof(Range{}), 40},
		{"APICall", unsafe.Sizeof(APICall{}), 40},
		{"MemOp", unsafe.Sizeof(MemOp{}), 80},
	} {
		if c.got > c.most {
			t.Errorf("model.%s is %d bytes, want at most %d: keep rare or repeated fields out of the row", c.name, c.got, c.most)
		}
	}
}
