package nsys

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// sqliteHeader is the first 16 bytes of every SQLite 3 database file.
const sqliteHeader = "SQLite format 3\x00"

// db is one read-only connection to an export. It speaks to the driver
// directly (not through database/sql) so that rows are scanned into reused
// variables without reflection.
type db struct {
	path   string
	c      *sqlite3.SQLiteConn
	tables map[string]string // table name as written → the same (type = 'table' only)
	// rowidOK caches which tables have a reachable rowid.
	rowidOK map[string]bool
	dsn     string
	// fast is the raw handle for integer-only scans (nil until first use,
	// or when it cannot be opened: the driver path is then used).
	fast      *fastConn
	fastTried bool
}

// dsnFor returns the read-only, immutable URI for path.
func dsnFor(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	abs = filepath.ToSlash(abs)
	if !strings.HasPrefix(abs, "/") {
		abs = "/" + abs // Windows drive letters
	}
	u := url.URL{Path: abs}
	return "file:" + u.EscapedPath() + "?mode=ro&immutable=1&_mutex=no", nil
}

// checkHeader refuses a file that is not an SQLite database.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &inputErr{path, "", err}
	}
	defer f.Close()
	var h [16]byte
	n, err := io.ReadFull(f, h[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return &inputErr{path, "byte 0", err}
	}
	if n >= 2 && h[0] == 0x1f && h[1] == 0x8b {
		return &inputErr{path, "byte 0", errors.New("gzip-compressed file: decompress the Nsight Systems SQLite export first")}
	}
	if string(h[:n]) != sqliteHeader {
		return &inputErr{path, "byte 0", fmt.Errorf("not an SQLite database (header %q, want %q)", h[:n], sqliteHeader)}
	}
	return nil
}

// inputErr carries the parts of an importers.InputError until Import wraps it.
type inputErr struct {
	file, pos string
	err       error
}

func (e *inputErr) Error() string { return e.file + ": " + e.pos + ": " + e.err.Error() }

// openDB opens path read-only and immutable, with no extensions and an
// untrusted schema, and lists its tables.
func openDB(path string) (*db, error) {
	if err := checkHeader(path); err != nil {
		return nil, err
	}
	dsn, err := dsnFor(path)
	if err != nil {
		return nil, &inputErr{path, "", err}
	}
	drv := &sqlite3.SQLiteDriver{}
	dc, err := drv.Open(dsn)
	if err != nil {
		return nil, &inputErr{path, "byte 0", fmt.Errorf("cannot open as SQLite: %v", err)}
	}
	c := dc.(*sqlite3.SQLiteConn)
	d := &db{path: path, c: c, tables: map[string]string{}, dsn: dsn}
	for _, p := range []string{"PRAGMA trusted_schema=OFF", "PRAGMA query_only=ON"} {
		if _, err := c.Exec(p, nil); err != nil {
			c.Close()
			return nil, &inputErr{path, "byte 0", fmt.Errorf("%s: %v", p, err)}
		}
	}
	names, err := d.strings("SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		c.Close()
		return nil, &inputErr{path, "sqlite_master", fmt.Errorf("cannot read the schema (damaged or not a database): %v", err)}
	}
	for _, n := range names {
		d.tables[n] = n
	}
	return d, nil
}

func (d *db) close() {
	d.fast.close()
	d.c.Close()
}

// fastHandle returns the raw handle, opening it on first use.
func (d *db) fastHandle() *fastConn {
	if !d.fastTried {
		d.fastTried = true
		if f, err := openFast(d.dsn); err == nil {
			d.fast = f
		}
	}
	return d.fast
}

func (d *db) has(table string) bool { _, ok := d.tables[table]; return ok }

// strings runs a one-column query and returns the text values.
func (d *db) strings(q string) ([]string, error) {
	rows, err := d.c.Query(q, nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	var out []string
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		if s, ok := asString(dest[0]); ok {
			out = append(out, s)
		}
	}
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// columns returns the set of column names of table (PRAGMA table_info).
func (d *db) columns(table string) (map[string]bool, error) {
	rows, err := d.c.Query("PRAGMA table_info("+quoteIdent(table)+")", nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := rows.Columns()
	nameIdx := -1
	for i, c := range cols {
		if c == "name" {
			nameIdx = i
		}
	}
	if nameIdx < 0 {
		return nil, errors.New("PRAGMA table_info has no name column")
	}
	dest := make([]driver.Value, len(cols))
	out := map[string]bool{}
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		if s, ok := asString(dest[nameIdx]); ok {
			out[s] = true
		}
	}
}

// colKind says what Go variable a column is scanned into.
type colKind uint8

const (
	kInt colKind = iota
	kFloat
	kStr
)

// col describes one wanted column: its possible names (renames across
// versions, first present wins), where to put it and what NULL means.
type col struct {
	names []string
	kind  colKind
	i     *int64
	f     *float64
	s     *string
	null  int64 // value of *i when NULL or absent
	valid *bool // optional: set to whether the value was non-NULL
	has   *bool // optional: set to whether the column exists
	// expr replaces the plain column in the SELECT list (e.g. a sum), with
	// %s standing for the quoted column name.
	expr string
	// req marks a required column (a time): a table without it is skipped,
	// and a row whose cell is NULL or not a number is dropped.
	req bool
}

func ci(p *int64, null int64, names ...string) col {
	return col{names: names, kind: kInt, i: p, null: null}
}

// ct is a required time column.
func ct(p *int64, names ...string) col   { return col{names: names, kind: kInt, i: p, req: true} }
func cf(p *float64, names ...string) col { return col{names: names, kind: kFloat, f: p} }
func cs(p *string, names ...string) col  { return col{names: names, kind: kStr, s: p} }

// scanStats reports what a scan met.
type scanStats struct {
	rows         int
	badCells     int    // cells whose value had the wrong type
	firstBad     string // position of the first such cell
	dropped      int    // rows dropped for a NULL or non-numeric required cell
	firstDropped string // position of the first such cell
}

// badCell counts a cell of c that was NULL (null) or of the wrong type; it
// reports whether the row is to be dropped (c is required).
func (st *scanStats) badCell(table string, row int, c *col, null bool) (drop bool) {
	switch {
	case c.req:
		if st.firstDropped == "" {
			st.firstDropped = fmt.Sprintf("table %s row %d column %s", table, row, c.names[0])
		}
		return true
	case !null:
		st.badCells++
		if st.firstBad == "" {
			st.firstBad = fmt.Sprintf("table %s row %d column %s", table, row, c.names[0])
		}
	}
	return false
}

// add merges o (a parallel producer's stats) into st.
func (st *scanStats) add(o scanStats) {
	st.rows += o.rows
	st.badCells += o.badCells
	st.dropped += o.dropped
	if st.firstBad == "" {
		st.firstBad = o.firstBad
	}
	if st.firstDropped == "" {
		st.firstDropped = o.firstDropped
	}
}

// missingRequired returns the first required column of cols that table
// lacks (under any of its names), or "".
func missingRequired(have map[string]bool, cols []col) string {
	for _, c := range cols {
		if !c.req {
			continue
		}
		if !slices.ContainsFunc(c.names, func(n string) bool { return have[n] }) {
			return c.names[0]
		}
	}
	return ""
}

// scanOpt narrows a scan.
type scanOpt struct {
	order  string // ORDER BY this column when the table has it
	part   bool   // only rows with lo <= rowid <= hi
	lo, hi int64
}

// rowidName returns a name that reaches the table's real rowid (a column
// may shadow "rowid"), or "" when every alias is shadowed.
func rowidName(have map[string]bool) string {
	for _, n := range []string{"rowid", "_rowid_", "oid"} {
		if !have[n] {
			return n
		}
	}
	return ""
}

// rowidRange returns the rowid alias, the smallest and largest rowid and the
// row count of table; ok is false for WITHOUT ROWID tables and other shapes
// that cannot be partitioned.
func (d *db) rowidRange(table string) (rid string, lo, hi, n int64, dense, ok bool) {
	have, err := d.columns(table)
	if err != nil {
		return "", 0, 0, 0, false, false
	}
	rid = rowidName(have)
	if rid == "" {
		return "", 0, 0, 0, false, false
	}
	// min and max of the rowid are two b-tree probes; count(*) would walk
	// the whole table, so n is estimated from them, bounded by the file size
	// over 64 bytes (below any real activity row; the estimate only sizes
	// the model's tables up front, so a low one costs a regrowth at worst).
	// (SQLite optimises a lone min() or max(), not both in one query.)
	probe := func(agg string) (int64, bool, error) {
		rows, err := d.c.Query("SELECT "+agg+"("+rid+") FROM "+quoteIdent(table), nil)
		if err != nil {
			return 0, false, err
		}
		defer rows.Close()
		dest := make([]driver.Value, 1)
		if err := rows.Next(dest); err != nil {
			return 0, false, err
		}
		v, ok := dest[0].(int64)
		return v, ok, nil
	}
	lo, ok1, err1 := probe("min")
	hi, ok2, err2 := probe("max")
	if err1 != nil || err2 != nil {
		return "", 0, 0, 0, false, false
	}
	if !ok1 || !ok2 {
		return rid, 0, -1, 0, false, true // empty table
	}
	span := hi - lo + 1
	if span <= 0 {
		span = math.MaxInt64
	}
	fi, err := os.Stat(d.path)
	if err != nil {
		return "", 0, 0, 0, false, false
	}
	n = min(span, fi.Size()/64)
	// Rowid ranges are only dealt out when rowids are dense enough that
	// the ranges are bounded by the file size (a hostile file could have
	// rowids 1 and 2^62).
	dense = span <= fi.Size()/16
	return rid, lo, hi, n, dense, true
}

// plan is a scan's SELECT and the columns it fills.
type plan struct {
	q         string
	live      []*col
	nsel      int
	withRowid bool
	allInts   bool
}

// plan builds the SELECT for cols on table; absent columns get their NULL
// value now. With opt.part the rowid range is bound as ?1, ?2 when
// opt.hi < opt.lo, else written into the query.
func (d *db) plan(table string, cols []col, opt scanOpt) (plan, error) {
	var pl plan
	have, err := d.columns(table)
	if err != nil {
		return pl, fmt.Errorf("table %s: %v", table, err)
	}
	rid := rowidName(have)
	pl.withRowid = rid != "" && d.hasRowid(table, rid)
	var sel []string
	if pl.withRowid {
		sel = append(sel, rid)
	}
	for k := range cols {
		c := &cols[k]
		name := ""
		for _, n := range c.names {
			if have[n] {
				name = n
				break
			}
		}
		if c.has != nil {
			*c.has = name != ""
		}
		if name == "" {
			setNull(c)
			continue
		}
		e := quoteIdent(name)
		if c.expr != "" {
			e = strings.ReplaceAll(c.expr, "%s", e)
		}
		sel = append(sel, e)
		pl.live = append(pl.live, c)
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + quoteIdent(table)
	if opt.part {
		if !pl.withRowid {
			return pl, fmt.Errorf("table %s: cannot partition a table without rowid", table)
		}
		if opt.hi < opt.lo {
			q += fmt.Sprintf(" WHERE %s BETWEEN ?1 AND ?2", rid)
		} else {
			q += fmt.Sprintf(" WHERE %s BETWEEN %d AND %d", rid, opt.lo, opt.hi)
		}
	}
	if opt.order != "" && have[opt.order] {
		q += " ORDER BY " + quoteIdent(opt.order)
		if pl.withRowid {
			q += ", " + rid
		}
	}
	pl.q, pl.nsel = q, len(sel)
	pl.allInts = true
	for _, c := range pl.live {
		if c.kind != kInt {
			pl.allInts = false
		}
	}
	return pl, nil
}

// scan reads table with the wanted columns, calling fn after each row with
// the row's rowid (its 1-based position in the table as written) or, for
// tables without a reachable rowid, the 1-based position in the scan.
// Absent columns keep their NULL value.
func (d *db) scan(ctx context.Context, table string, cols []col, opt scanOpt, fn func(row int)) (scanStats, error) {
	var st scanStats
	pl, err := d.plan(table, cols, opt)
	if err != nil || len(pl.live) == 0 {
		return st, err
	}
	if pl.allInts {
		if f := d.fastHandle(); f != nil {
			return f.scanInts(ctx, table, pl.q, pl.live, pl.withRowid, fn)
		}
	}
	q, live, sel := pl.q, pl.live, pl.nsel
	rows, err := d.c.Query(q, nil)
	if err != nil {
		return st, fmt.Errorf("table %s: %v", table, err)
	}
	defer rows.Close()
	dest := make([]driver.Value, sel)
	off := sel - len(live)
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return st, nil
			}
			return st, fmt.Errorf("table %s row %d: %v", table, st.rows+1, err)
		}
		st.rows++
		if st.rows&0xFFFF == 0 {
			if err := ctx.Err(); err != nil {
				return st, err
			}
		}
		row := st.rows
		if off > 0 {
			if id, ok := dest[0].(int64); ok && id >= math.MinInt && id <= math.MaxInt {
				row = int(id)
			}
		}
		drop := false
		for k, c := range live {
			v := dest[off+k]
			if !assign(c, v) || (v == nil && c.req) {
				drop = st.badCell(table, row, c, v == nil) || drop
			}
		}
		if drop {
			st.dropped++
			continue
		}
		fn(row)
	}
}

// hasRowid reports whether table is an ordinary rowid table (cached).
func (d *db) hasRowid(table, rid string) bool {
	if v, ok := d.rowidOK[table]; ok {
		return v
	}
	rows, err := d.c.Query("SELECT "+rid+" FROM "+quoteIdent(table)+" LIMIT 0", nil)
	ok := err == nil
	if ok {
		rows.Close()
	}
	if d.rowidOK == nil {
		d.rowidOK = map[string]bool{}
	}
	d.rowidOK[table] = ok
	return ok
}

func setNull(c *col) {
	switch c.kind {
	case kInt:
		*c.i = c.null
	case kFloat:
		*c.f = 0
	case kStr:
		*c.s = ""
	}
	if c.valid != nil {
		*c.valid = false
	}
}

// assign stores v in c's variable; false when v had an unusable type (the
// variable then holds the NULL value).
func assign(c *col, v driver.Value) bool {
	if v == nil {
		setNull(c)
		return true
	}
	if c.valid != nil {
		*c.valid = true
	}
	switch c.kind {
	case kInt:
		switch x := v.(type) {
		case int64:
			*c.i = x
			return true
		case float64:
			if x >= math.MinInt64 && x < math.MaxInt64 && !math.IsNaN(x) {
				*c.i = int64(x)
				return true
			}
		case []byte:
			if n, err := strconv.ParseInt(strings.TrimSpace(string(x)), 10, 64); err == nil {
				*c.i = n
				return true
			}
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				*c.i = n
				return true
			}
		case bool:
			*c.i = 0
			if x {
				*c.i = 1
			}
			return true
		case time.Time:
			*c.i = x.UnixNano()
			return true
		}
		*c.i = c.null
		if c.valid != nil {
			*c.valid = false
		}
		return false
	case kFloat:
		switch x := v.(type) {
		case int64:
			*c.f = float64(x)
			return true
		case float64:
			*c.f = x
			return true
		case []byte:
			if f, err := strconv.ParseFloat(strings.TrimSpace(string(x)), 64); err == nil {
				*c.f = f
				return true
			}
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
				*c.f = f
				return true
			}
		}
		*c.f = 0
		return false
	default:
		s, ok := asString(v)
		*c.s = s
		return ok
	}
}

func asString(v driver.Value) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case nil:
		return "", true
	}
	return "", false
}
