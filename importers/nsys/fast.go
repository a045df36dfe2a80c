package nsys

// The fast path for integer-only tables (KERNEL, RUNTIME, MEMCPY, ...):
// go-sqlite3 boxes every cell into a driver.Value (an allocation for each
// integer above 255) and makes two API calls per cell from its row loop,
// which costs about four times SQLite's own row decoding. Here one cgo call
// steps up to batchCells/ncol rows and copies their integer cells into a Go
// []int64, with a type code per cell. The SQLite library is the one that
// go-sqlite3 links into the binary; only its stable C API is declared below.

/*
#include <stdint.h>
#include <stdlib.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
int sqlite3_open_v2(const char *filename, sqlite3 **ppDb, int flags, const char *zVfs);
int sqlite3_close_v2(sqlite3 *db);
int sqlite3_exec(sqlite3 *db, const char *sql, void *callback, void *arg, char **errmsg);
int sqlite3_prepare_v2(sqlite3 *db, const char *zSql, int nByte, sqlite3_stmt **ppStmt, const char **pzTail);
int sqlite3_step(sqlite3_stmt *stmt);
int sqlite3_finalize(sqlite3_stmt *stmt);
int sqlite3_column_count(sqlite3_stmt *stmt);
typedef struct sqlite3_value sqlite3_value;
sqlite3_value *sqlite3_column_value(sqlite3_stmt *stmt, int iCol);
int sqlite3_value_type(sqlite3_value *v);
long long sqlite3_value_int64(sqlite3_value *v);
const char *sqlite3_errmsg(sqlite3 *db);
int sqlite3_reset(sqlite3_stmt *stmt);
int sqlite3_bind_int64(sqlite3_stmt *stmt, int i, long long v);

// tdx_bind_range resets stmt and binds ?1, ?2.
static int tdx_bind_range(sqlite3_stmt *st, long long a, long long b) {
	sqlite3_reset(st);
	int rc = sqlite3_bind_int64(st, 1, a);
	if (rc != 0) return rc;
	return sqlite3_bind_int64(st, 2, b);
}

// tdx_step_ints steps stmt up to max rows and writes each row's ncol cells
// to out (integers; reals truncated; others 0) and their SQLite type codes to
// types. It returns the number of rows written and the last step code in *rc.
// The column values are unprotected sqlite3_value objects, which SQLite
// allows to read from the one thread that owns the (NOMUTEX) connection.
static int tdx_step_ints(sqlite3_stmt *st, int ncol, long long *out, unsigned char *types, int max, int *rc) {
	int n = 0;
	while (n < max) {
		int r = sqlite3_step(st);
		if (r != 100) { // SQLITE_ROW
			*rc = r;
			return n;
		}
		long long *o = out + (long)n * ncol;
		unsigned char *t = types + (long)n * ncol;
		for (int i = 0; i < ncol; i++) {
			sqlite3_value *v = sqlite3_column_value(st, i);
			int ty = sqlite3_value_type(v);
			t[i] = (unsigned char)ty;
			o[i] = (ty == 1 || ty == 2) ? sqlite3_value_int64(v) : 0;
		}
		n++;
	}
	*rc = 100;
	return n;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"unsafe"
)

const (
	sqliteOK      = 0
	sqliteRow     = 100
	sqliteDone    = 101
	sqliteInteger = 1
	sqliteFloat   = 2
	sqliteNull    = 5

	openReadOnly = 0x00000001
	openURI      = 0x00000040
	openNoMutex  = 0x00008000

	batchCells = 1 << 16
)

// fastConn is a second, raw handle on the same export, opened with the same
// read-only, immutable URI and pragmas as the driver connection.
type fastConn struct {
	db *C.sqlite3
}

func openFast(dsn string) (*fastConn, error) {
	cdsn := C.CString(dsn)
	defer C.free(unsafe.Pointer(cdsn))
	var h *C.sqlite3
	if rc := C.sqlite3_open_v2(cdsn, &h, openReadOnly|openURI|openNoMutex, nil); rc != sqliteOK {
		msg := "cannot open"
		if h != nil {
			msg = C.GoString(C.sqlite3_errmsg(h))
			C.sqlite3_close_v2(h)
		}
		return nil, errors.New(msg)
	}
	f := &fastConn{db: h}
	for _, p := range []string{"PRAGMA trusted_schema=OFF", "PRAGMA query_only=ON"} {
		cp := C.CString(p)
		rc := C.sqlite3_exec(h, cp, nil, nil, nil)
		C.free(unsafe.Pointer(cp))
		if rc != sqliteOK {
			f.close()
			return nil, fmt.Errorf("%s failed", p)
		}
	}
	return f, nil
}

func (f *fastConn) close() {
	if f != nil && f.db != nil {
		C.sqlite3_close_v2(f.db)
		f.db = nil
	}
}

// fastStmt is a prepared integer-only query with its cell buffers.
type fastStmt struct {
	f     *fastConn
	st    *C.sqlite3_stmt
	ncol  int
	per   int
	vals  []int64
	types []byte
}

func (f *fastConn) prepare(table, q string, want int) (*fastStmt, error) {
	cq := C.CString(q)
	defer C.free(unsafe.Pointer(cq))
	var stmt *C.sqlite3_stmt
	if rc := C.sqlite3_prepare_v2(f.db, cq, -1, &stmt, nil); rc != sqliteOK {
		return nil, fmt.Errorf("table %s: %s", table, C.GoString(C.sqlite3_errmsg(f.db)))
	}
	ncol := int(C.sqlite3_column_count(stmt))
	if ncol != want || ncol == 0 {
		C.sqlite3_finalize(stmt)
		return nil, fmt.Errorf("table %s: %d result columns, want %d", table, ncol, want)
	}
	per := max(batchCells/ncol, 1)
	return &fastStmt{f: f, st: stmt, ncol: ncol, per: per, vals: make([]int64, per*ncol), types: make([]byte, per*ncol)}, nil
}

func (s *fastStmt) close() { C.sqlite3_finalize(s.st) }

// bindRange resets the statement and binds its rowid range ?1..?2.
func (s *fastStmt) bindRange(a, b int64) error {
	if rc := C.tdx_bind_range(s.st, C.longlong(a), C.longlong(b)); rc != sqliteOK {
		return errors.New(C.GoString(C.sqlite3_errmsg(s.f.db)))
	}
	return nil
}

// run steps the statement to its end and assigns each row's cells like
// assign does for integers (the rowid first when withRowid), calling fn per
// row.
func (s *fastStmt) run(ctx context.Context, table string, live []*col, withRowid bool, st *scanStats, fn func(row int)) error {
	ncol := s.ncol
	off := 0
	if withRowid {
		off = 1
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var rc C.int
		n := int(C.tdx_step_ints(s.st, C.int(ncol), (*C.longlong)(unsafe.Pointer(&s.vals[0])), (*C.uchar)(unsafe.Pointer(&s.types[0])), C.int(s.per), &rc))
		for r := 0; r < n; r++ {
			v := s.vals[r*ncol : (r+1)*ncol]
			ty := s.types[r*ncol : (r+1)*ncol]
			st.rows++
			row := st.rows
			if withRowid && ty[0] == sqliteInteger {
				row = int(v[0])
			}
			drop := false
			for k, c := range live {
				switch ty[off+k] {
				case sqliteInteger, sqliteFloat:
					*c.i = v[off+k]
					if c.valid != nil {
						*c.valid = true
					}
				case sqliteNull:
					setNull(c)
					if c.req {
						drop = st.badCell(table, row, c, true) || drop
					}
				default:
					setNull(c)
					drop = st.badCell(table, row, c, false) || drop
				}
			}
			if drop {
				st.dropped++
				continue
			}
			fn(row)
		}
		switch rc {
		case sqliteRow:
		case sqliteDone:
			return nil
		default:
			return fmt.Errorf("table %s row %d: %s", table, st.rows+1, C.GoString(C.sqlite3_errmsg(s.f.db)))
		}
	}
}

// scanInts runs q (whose columns are all read as integers: an optional rowid
// first, then one per entry of live), calling fn per row.
func (f *fastConn) scanInts(ctx context.Context, table, q string, live []*col, withRowid bool, fn func(row int)) (scanStats, error) {
	var st scanStats
	want := len(live)
	if withRowid {
		want++
	}
	s, err := f.prepare(table, q, want)
	if err != nil {
		return st, err
	}
	defer s.close()
	err = s.run(ctx, table, live, withRowid, &st, fn)
	return st, err
}
