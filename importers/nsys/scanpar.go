package nsys

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// Big integer-only tables are read in parallel: rowid ranges of batchRows
// rowids are dealt round-robin to producers (range k to producer k mod P),
// each with its own read-only connection, and the builder consumes range 0,
// 1, 2, ... in order. The builder thus sees the rows in table order (real
// exports are written in start order, which Finalize then need not sort) and
// the result does not depend on timing.
const (
	batchRows = 4096
	maxParts  = 8
)

// parallelAbove is the row count from which a table is read in parallel
// (a variable so that tests can exercise the parallel path on small files).
var parallelAbove int64 = 1 << 17

type rowBatch[R any] struct {
	rows []R
	ids  []int
}

type producer[R any] struct {
	ch   chan *rowBatch[R]
	free chan *rowBatch[R]
	st   scanStats
	err  error
}

// scanRows reads table into row values of type R (bind ties the columns to
// one value) and calls fn with each row's number and value, in table order.
// order asks for an ORDER BY (and a sequential read).
func scanRows[R any](ctx context.Context, r *reader, table string, bind func(*R) []col, order string, fn func(row int, x *R)) error {
	var probe R
	if !r.usable(table, bind(&probe)) {
		return nil
	}
	parts := 1
	var lo, hi, n int64
	if order == "" {
		var dense, ok bool
		if _, lo, hi, n, dense, ok = r.d.rowidRange(table); ok {
			r.b.reserve(table, n)
			if dense && n >= parallelAbove && hi > lo {
				parts = min(runtime.GOMAXPROCS(0), maxParts)
			}
		}
	}
	if parts > 1 {
		pl, err := r.d.plan(table, bind(&probe), scanOpt{part: true, lo: 1, hi: 0})
		if err != nil || !pl.allInts || !pl.withRowid || len(pl.live) == 0 || r.d.fastHandle() == nil {
			parts = 1
		}
	}
	if parts <= 1 {
		var x R
		st, err := r.d.scan(ctx, table, bind(&x), scanOpt{order: order}, func(row int) { fn(row, &x) })
		r.report(table, st)
		return err
	}

	ctx2, cancel := context.WithCancel(ctx)
	defer cancel()
	ps := make([]*producer[R], parts)
	var wg sync.WaitGroup
	for i := range ps {
		p := &producer[R]{ch: make(chan *rowBatch[R], 2), free: make(chan *rowBatch[R], 4)}
		for k := 0; k < 4; k++ {
			p.free <- &rowBatch[R]{rows: make([]R, 0, batchRows), ids: make([]int, 0, batchRows)}
		}
		ps[i] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(p.ch)
			p.err = produce(ctx2, r.d.path, table, bind, p, int64(i), int64(parts), lo, hi)
		}()
	}
	for k := 0; ; k++ {
		p := ps[k%parts]
		bt, ok := <-p.ch
		if !ok {
			break
		}
		for i := range bt.rows {
			fn(bt.ids[i], &bt.rows[i])
		}
		bt.rows, bt.ids = bt.rows[:0], bt.ids[:0]
		p.free <- bt
	}
	cancel()
	wg.Wait()
	var total scanStats
	for _, p := range ps {
		total.add(p.st)
	}
	r.report(table, total)
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, p := range ps {
		if p.err != nil && p.err != context.Canceled {
			return p.err
		}
	}
	return nil
}

// produce reads rowid ranges first, first+step, ... of table on its own
// connection and sends one batch per range (empty ones too, so that the
// consumer's order stays fixed).
func produce[R any](ctx context.Context, path, table string, bind func(*R) []col, p *producer[R], first, step, lo, hi int64) error {
	d, err := openDB(path)
	if err != nil {
		return err
	}
	defer d.close()
	f := d.fastHandle()
	if f == nil {
		return errors.New("table " + table + ": cannot open a second connection")
	}
	var x R
	pl, err := d.plan(table, bind(&x), scanOpt{part: true, lo: 1, hi: 0})
	if err != nil {
		return err
	}
	s, err := f.prepare(table, pl.q, pl.nsel)
	if err != nil {
		return err
	}
	defer s.close()
	for k := first; ; k += step {
		a := lo + k*batchRows
		if a > hi || a < lo {
			return nil
		}
		b := a + batchRows - 1
		if b > hi || b < a {
			b = hi
		}
		var cur *rowBatch[R]
		select {
		case cur = <-p.free:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := s.bindRange(a, b); err != nil {
			return fmt.Errorf("table %s: %v", table, err)
		}
		err := s.run(ctx, table, pl.live, pl.withRowid, &p.st, func(row int) {
			cur.rows = append(cur.rows, x)
			cur.ids = append(cur.ids, row)
		})
		if err != nil {
			return err
		}
		select {
		case p.ch <- cur:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
