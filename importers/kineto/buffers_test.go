package kineto

import (
	"bytes"
	"io"
	"testing"
)

// TestAsyncReaderClose: Close lets the buffers go whether or not the input
// was read to its end, is idempotent, and later reads end.
func TestAsyncReaderClose(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), asyncChunk/4) // 2.5 chunks
	for _, readAll := range []bool{true, false} {
		a := newAsyncReader(bytes.NewReader(data))
		if readAll {
			got, err := io.ReadAll(a)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read %d bytes, err %v; want %d bytes", len(got), err, len(data))
			}
		} else if _, err := io.ReadFull(a, make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
		a.Close()
		a.Close()
		if len(a.free) != 0 || a.cur != nil || a.back != nil {
			t.Fatalf("readAll=%v: buffers still held after Close", readAll)
		}
		if n, err := a.Read(make([]byte, 10)); n != 0 || err != io.EOF {
			t.Fatalf("readAll=%v: Read after Close = %d, %v; want 0, EOF", readAll, n, err)
		}
	}
}

// TestTableWalk: each and any see every element in the order added, across
// chunks, and bytes counts them.
func TestTableWalk(t *testing.T) {
	var c table[int64]
	const n = 70000 // several chunks
	for i := int64(0); i < n; i++ {
		c.add(i)
	}
	next := int64(0)
	c.each(func(v *int64) {
		if *v != next {
			t.Fatalf("each: got %d, want %d", *v, next)
		}
		next++
	})
	if next != n || c.len() != n || c.bytes() != 8*n {
		t.Fatalf("each saw %d, len %d, bytes %d; want %d, %d, %d", next, c.len(), c.bytes(), n, n, 8*n)
	}
	if !c.any(func(v *int64) bool { return *v == n-1 }) || c.any(func(v *int64) bool { return *v < 0 }) {
		t.Fatal("any: wrong answer")
	}
}
