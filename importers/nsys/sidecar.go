package nsys

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// An export is opened immutable (read-only, no locks, no journal): a file
// that SQLite itself would read differently because of a file beside it is
// reported, never written, replayed or deleted.
//
//   - FILE-wal holds transactions committed in WAL mode but not yet
//     checkpointed into FILE: SQLite would show them, we do not.
//   - A hot FILE-journal (non-empty, with a valid rollback-journal header)
//     belongs to a transaction that did not finish: SQLite would roll FILE
//     back from it, we read FILE as it is, half-written pages included.

// walMagic and journalMagic start a WAL file and a rollback journal.
var (
	walMagic     = [2]uint32{0x377f0682, 0x377f0683}
	journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}
)

// sidecarWarnings returns one plain warning per WAL or hot journal beside
// path that holds changes the immutable read ignores.
func sidecarWarnings(path string) []string {
	var out []string
	if h, size, ok := head(path+"-wal", 32); ok && size > 32 {
		m := binary.BigEndian.Uint32(h[:4])
		if m == walMagic[0] || m == walMagic[1] {
			page := int64(binary.BigEndian.Uint32(h[8:12]))
			frames := ""
			if page >= 512 && page <= 65536 {
				frames = fmt.Sprintf(", about %d pages", (size-32)/(page+24))
			}
			out = append(out, fmt.Sprintf("%s-wal (%d bytes%s) holds changes not checkpointed into the export; they are not read "+
				"(the export is opened immutable and never written): SQLite tools may show more rows than this report", path, size, frames))
		}
	}
	if h, size, ok := head(path+"-journal", 8); ok && size > 0 && bytes.Equal(h, journalMagic) {
		out = append(out, fmt.Sprintf("%s-journal is a hot rollback journal (%d bytes): a write to the export did not finish; "+
			"the export is read as it is, possibly half-written (not rolled back: it is opened immutable and never written)", path, size))
	}
	return out
}

// head returns the first n bytes of path and its size; ok is false when
// path does not exist or holds fewer than n bytes.
func head(path string, n int) ([]byte, int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, 0, false
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, 0, false
	}
	return b, st.Size(), true
}
