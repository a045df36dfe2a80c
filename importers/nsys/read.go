package nsys

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// reader feeds the builder from an open export, one table at a time, in the
// order the builder needs: names and dimensions first, then RUNTIME (which
// sync classification uses), then the GPU tables, NVTX and OS runtime.
type reader struct {
	d *db
	b *builder
}

// report counts a table's rows and reports wrongly typed cells and dropped
// rows as one warning each per table.
func (r *reader) report(table string, st scanStats) {
	r.b.rows[table] += st.rows - st.dropped
	if st.badCells > 0 {
		r.b.w.Warn(st.firstBad, "%d cells of table %s hold a value of the wrong type (read as NULL)", st.badCells, table)
	}
	if st.dropped > 0 {
		r.b.w.Warn(st.firstDropped, "%d rows of table %s dropped: a time is NULL or not a number", st.dropped, table)
	}
}

// usable reports whether table is present with every required column of
// cols; a table that lacks one is skipped with a warning, and what it
// would have measured is noted as not measurable.
func (r *reader) usable(table string, cols []col) bool {
	if !r.d.has(table) {
		return false
	}
	have, err := r.d.columns(table)
	if err == nil {
		if c := missingRequired(have, cols); c != "" {
			r.b.skipTable(table, c)
			return false
		}
	}
	r.b.present[table] = true
	return true
}

// scan reads one small table if present, on the main connection.
func (r *reader) scan(ctx context.Context, table string, cols []col, order string, fn func(row int)) error {
	if !r.usable(table, cols) {
		return nil
	}
	st, err := r.d.scan(ctx, table, cols, scanOpt{order: order}, fn)
	r.report(table, st)
	return err
}

func (r *reader) read(ctx context.Context) error {
	steps := []func(context.Context) error{
		r.readStrings, r.readMeta, r.readEnums, r.readDevices, r.readNames,
		r.readRuntime, r.readKernels, r.readGraphTrace, r.readMemcpy, r.readMemset, r.readSync,
		r.readNVTX, r.readOSRT, r.readGPUMetrics, r.readMemUsage, r.readPython,
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) readStrings(ctx context.Context) error {
	if !r.d.has(tStrings) {
		r.b.w.Warn("table "+tStrings, "the export has no StringIds table: names are unknown")
		return nil
	}
	var count, maxID int64
	cnt := []col{ci(&count, 0, "id"), ci(&maxID, -1, "id")}
	cnt[0].expr, cnt[1].expr = "count(%s)", "max(%s)"
	if _, err := r.d.scan(ctx, tStrings, cnt, scanOpt{}, func(int) {}); err != nil {
		return err
	}
	r.b.setStringsSize(count, maxID)
	var id int64
	var v string
	return r.scan(ctx, tStrings, []col{ci(&id, -1, "id"), cs(&v, "value")}, "", func(int) { r.b.addString(id, v) })
}

func (r *reader) readMeta(ctx context.Context) error {
	var name, value string
	for _, tab := range []string{tMetaExport, tMetaExportOld} {
		if err := r.scan(ctx, tab, []col{cs(&name, "name"), cs(&value, "value")}, "", func(int) { r.b.addMeta(name, value) }); err != nil {
			return err
		}
	}
	var epoch int64
	if err := r.scan(ctx, tSessionStart, []col{ci(&epoch, 0, "utcEpochNs")}, "", func(int) { r.b.setSessionStart(epoch) }); err != nil {
		return err
	}
	var dur int64
	return r.scan(ctx, tAnalysis, []col{ci(&dur, 0, "duration")}, "", func(int) { r.b.setDuration(dur) })
}

func (r *reader) readEnums(ctx context.Context) error {
	var id int64
	var name, label string
	for _, tab := range []string{tEnumMemcpy, tEnumMemKind} {
		err := r.scan(ctx, tab, []col{ci(&id, -1, "id"), cs(&name, "name"), cs(&label, "label")}, "", func(int) {
			l := label
			if l == "" {
				l = name
			}
			r.b.addEnum(tab, id, l)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) readDevices(ctx context.Context) error {
	var g gpuRow
	cols := []col{
		ci(&g.ID, -1, "id", "deviceId"), ci(&g.CuDevice, -1, "cuDevice"), cs(&g.Name, "name"),
		ci(&g.SMs, 0, "smCount"), ci(&g.Memory, 0, "totalMemory"), cf(&g.Bandwidth, "memoryBandwidth"),
		ci(&g.Major, 0, "computeMajor"), ci(&g.Minor, 0, "computeMinor"), cs(&g.Bus, "busLocation"),
	}
	cols[6].has = &g.HasCompute
	if err := r.scan(ctx, tGPU, cols, "", func(row int) { r.b.addGPU(row, &g) }); err != nil {
		return err
	}
	if !r.d.has(tGPU) {
		// 2020.x: TARGET_INFO_CUDA_GPU, one row per (process, device).
		g = gpuRow{}
		cols := []col{
			ci(&g.ID, -1, "deviceId"), cs(&g.Name, "name"), ci(&g.SMs, 0, "numMultiprocessors"),
			ci(&g.Memory, 0, "globalMemorySize"), cf(&g.Bandwidth, "globalMemoryBandwidth"),
			ci(&g.Major, 0, "computeCapabilityMajor"), ci(&g.Minor, 0, "computeCapabilityMinor"), cs(&g.Bus, "pciBusId"),
		}
		err := r.scan(ctx, tCUDAGPU, cols, "", func(row int) {
			g.CuDevice = g.ID
			if g.Memory > 0 && g.Memory < 1<<24 {
				g.Memory <<= 20 // 2020.x stores MiB
			}
			r.b.addGPU(row, &g)
		})
		if err != nil {
			return err
		}
	}
	var cd cudaDeviceRow
	return r.scan(ctx, tCUDADevice, []col{ci(&cd.GPUID, -1, "gpuId"), ci(&cd.CudaID, -1, "cudaId"), ci(&cd.PID, -1, "pid")}, "",
		func(row int) { r.b.addCUDADevice(row, &cd) })
}

func (r *reader) readNames(ctx context.Context) error {
	var tn threadNameRow
	if err := r.scan(ctx, tThreadNames, []col{ci(&tn.GlobalTid, 0, "globalTid"), ci(&tn.NameID, -1, "nameId")}, "",
		func(row int) { r.b.addThreadName(row, &tn) }); err != nil {
		return err
	}
	var p processRow
	if err := r.scan(ctx, tProcesses, []col{ci(&p.GlobalPid, 0, "globalPid"), ci(&p.PID, -1, "pid"), cs(&p.Name, "name")}, "",
		func(row int) { r.b.addProcess(row, &p) }); err != nil {
		return err
	}
	var c callchainRow
	return r.scan(ctx, tOSRTChains, []col{ci(&c.ID, 0, "id"), ci(&c.Symbol, -1, "symbol"), ci(&c.Module, -1, "module"), ci(&c.Depth, 0, "stackDepth")}, "",
		func(row int) { r.b.addCallchainFrame(row, &c) })
}

func (r *reader) readRuntime(ctx context.Context) error {
	for _, tab := range []string{tRuntime, tDriver} {
		bind := func(x *runtimeRow) []col {
			return []col{
				ct(&x.Start, "start"), ct(&x.End, "end"), ci(&x.EventClass, -1, "eventClass"),
				ci(&x.GlobalTid, 0, "globalTid"), ci(&x.Correlation, 0, "correlationId"), ci(&x.NameID, -1, "nameId"),
			}
		}
		if err := scanRows(ctx, r, tab, bind, "", func(row int, x *runtimeRow) { r.b.runtime(tab, row, x) }); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) readKernels(ctx context.Context) error {
	if !r.d.has(tKernel) {
		return nil
	}
	have, err := r.d.columns(tKernel)
	if err != nil {
		return fmt.Errorf("table %s: %v", tKernel, err)
	}
	bind := func(k *kernelRow) []col {
		smem := ci(&k.SharedMem, 0, "staticSharedMemory")
		// Static plus dynamic shared memory in one column when both exist.
		if have["staticSharedMemory"] && have["dynamicSharedMemory"] {
			smem.expr = `coalesce(%s, 0) + coalesce("dynamicSharedMemory", 0)`
		} else if have["dynamicSharedMemory"] {
			smem = ci(&k.SharedMem, 0, "dynamicSharedMemory")
		}
		return []col{
			ct(&k.Start, "start"), ct(&k.End, "end"), ci(&k.DeviceID, 0, "deviceId"), ci(&k.StreamID, 0, "streamId"),
			ci(&k.Correlation, 0, "correlationId"), ci(&k.GlobalPid, 0, "globalPid"),
			ci(&k.Demangled, -1, "demangledName"), ci(&k.Short, -1, "shortName"), ci(&k.Registers, 0, "registersPerThread"),
			ci(&k.Grid[0], 0, "gridX"), ci(&k.Grid[1], 0, "gridY"), ci(&k.Grid[2], 0, "gridZ"),
			ci(&k.Block[0], 0, "blockX"), ci(&k.Block[1], 0, "blockY"), ci(&k.Block[2], 0, "blockZ"),
			smem, ci(&k.GraphID, 0, "graphId"), ci(&k.GraphNodeID, 0, "graphNodeId"),
		}
	}
	return scanRows(ctx, r, tKernel, bind, "", func(row int, k *kernelRow) { r.b.kernel(row, k) })
}

func (r *reader) readGraphTrace(ctx context.Context) error {
	bind := func(g *graphTraceRow) []col {
		return []col{
			ct(&g.Start, "start"), ct(&g.End, "end"), ci(&g.DeviceID, 0, "deviceId"), ci(&g.StreamID, 0, "streamId"),
			ci(&g.Correlation, 0, "correlationId"), ci(&g.GlobalPid, 0, "globalPid"), ci(&g.GraphID, 0, "graphId"),
		}
	}
	return scanRows(ctx, r, tGraphTrace, bind, "", func(row int, g *graphTraceRow) { r.b.graphTrace(row, g) })
}

func (r *reader) readMemcpy(ctx context.Context) error {
	bind := func(m *memcpyRow) []col {
		return []col{
			ct(&m.Start, "start"), ct(&m.End, "end"), ci(&m.DeviceID, 0, "deviceId"), ci(&m.StreamID, 0, "streamId"),
			ci(&m.Correlation, 0, "correlationId"), ci(&m.GlobalPid, 0, "globalPid"), ci(&m.Bytes, -1, "bytes"),
			ci(&m.CopyKind, 0, "copyKind"), ci(&m.SrcKind, 7, "srcKind"), ci(&m.DstKind, 7, "dstKind"),
			ci(&m.MigrationCause, 0, "migrationCause"), ci(&m.VirtualAddress, 0, "virtualAddress"),
		}
	}
	return scanRows(ctx, r, tMemcpy, bind, "", func(row int, m *memcpyRow) { r.b.memcpy(row, m) })
}

func (r *reader) readMemset(ctx context.Context) error {
	bind := func(m *memsetRow) []col {
		return []col{
			ct(&m.Start, "start"), ct(&m.End, "end"), ci(&m.DeviceID, 0, "deviceId"), ci(&m.StreamID, 0, "streamId"),
			ci(&m.Correlation, 0, "correlationId"), ci(&m.GlobalPid, 0, "globalPid"), ci(&m.Bytes, -1, "bytes"),
			ci(&m.MemKind, -1, "memKind"),
		}
	}
	return scanRows(ctx, r, tMemset, bind, "", func(row int, m *memsetRow) { r.b.memset(row, m) })
}

func (r *reader) readSync(ctx context.Context) error {
	bind := func(s *syncRow) []col {
		return []col{
			ct(&s.Start, "start"), ct(&s.End, "end"), ci(&s.DeviceID, -1, "deviceId"), ci(&s.StreamID, -1, "streamId"),
			ci(&s.Correlation, 0, "correlationId"), ci(&s.GlobalPid, 0, "globalPid"), ci(&s.SyncType, -1, "syncType"),
		}
	}
	return scanRows(ctx, r, tSync, bind, "", func(row int, s *syncRow) { r.b.sync(row, s) })
}

func (r *reader) readNVTX(ctx context.Context) error {
	bind := func(n *nvtxRow) []col {
		cols := []col{
			ct(&n.Start, "start"), ci(&n.End, 0, "end"), ci(&n.EventType, -1, "eventType"),
			ci(&n.GlobalTid, 0, "globalTid"), ci(&n.TextID, -1, "textId"), ci(&n.DomainID, 0, "domainId"),
			cs(&n.Text, "text"),
		}
		cols[1].valid = &n.EndValid
		cols[6].valid = &n.TextValid
		return cols
	}
	// Domains created after their first use are resolved by the builder.
	return scanRows(ctx, r, tNVTX, bind, "", func(row int, n *nvtxRow) { r.b.nvtx(row, n) })
}

func (r *reader) readOSRT(ctx context.Context) error {
	bind := func(o *osrtRow) []col {
		return []col{
			ct(&o.Start, "start"), ct(&o.End, "end"), ci(&o.EventClass, -1, "eventClass"),
			ci(&o.GlobalTid, 0, "globalTid"), ci(&o.NameID, -1, "nameId"), ci(&o.CallchainID, 0, "callchainId"),
		}
	}
	return scanRows(ctx, r, tOSRT, bind, "", func(row int, o *osrtRow) { r.b.osrt(row, o) })
}

func (r *reader) readGPUMetrics(ctx context.Context) error {
	var d metricDefRow
	if err := r.scan(ctx, tGPUMetricsInfo, []col{ci(&d.TypeID, -1, "typeId"), ci(&d.MetricID, -1, "metricId"),
		cs(&d.TypeName, "typeName"), cs(&d.MetricName, "metricName")}, "", func(row int) { r.b.addMetricDef(row, &d) }); err != nil {
		return err
	}
	var m metricRow
	return r.scan(ctx, tGPUMetrics, []col{ct(&m.Timestamp, "timestamp"), ci(&m.TypeID, -1, "typeId"),
		ci(&m.MetricID, -1, "metricId"), cf(&m.Value, "value")}, "timestamp", func(row int) { r.b.metric(row, &m) })
}

func (r *reader) readMemUsage(ctx context.Context) error {
	var m memUsageRow
	cols := []col{
		ct(&m.Start, "start"), ci(&m.GlobalPid, 0, "globalPid"), ci(&m.DeviceID, 0, "deviceId"),
		ci(&m.Address, 0, "address"), ci(&m.Bytes, 0, "bytes"), ci(&m.MemKind, -1, "memKind"),
		ci(&m.Op, -1, "memoryOperationType"),
	}
	// Running totals need time order; this table is small.
	return r.scan(ctx, tMemUsage, cols, "start", func(row int) { r.b.memUsage(row, &m) })
}

var gilTableName = regexp.MustCompile(`(?i)gil`)
var pythonTableName = regexp.MustCompile(`(?i)python`)

// readPython finds Python GIL and sampling tables by name and column shape.
// Their layout is not documented: a GIL table is imported when it has
// start/end (or startedAt/endedAt), a thread id and a recognisable state; any
// other shape is a warning.
func (r *reader) readPython(ctx context.Context) error {
	names := make([]string, 0, len(r.d.tables))
	for n := range r.d.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, tab := range names {
		if strings.HasPrefix(tab, "ENUM_") {
			continue
		}
		if gilTableName.MatchString(tab) {
			if err := r.readGIL(ctx, tab); err != nil {
				return err
			}
			continue
		}
		if pythonTableName.MatchString(tab) {
			r.b.present[tab] = true
			r.b.pythonTables = append(r.b.pythonTables, tab)
		}
	}
	return nil
}

func (r *reader) readGIL(ctx context.Context, tab string) error {
	have, err := r.d.columns(tab)
	if err != nil {
		return fmt.Errorf("table %s: %v", tab, err)
	}
	pick := func(names ...string) string {
		for _, n := range names {
			if have[n] {
				return n
			}
		}
		// case-insensitive fallback
		for _, n := range names {
			for h := range have {
				if strings.EqualFold(h, n) {
					return h
				}
			}
		}
		return ""
	}
	start, end := pick("start", "startedAt", "startTime"), pick("end", "endedAt", "endTime", "stop")
	tid := pick("globalTid", "globalThreadId")
	state := pick("state", "gilState", "type", "eventType", "name", "text")
	stateID := pick("nameId", "stateId", "textId")
	fixed := ""
	upper := strings.ToUpper(tab)
	switch {
	case strings.Contains(upper, "WAIT"):
		fixed = "waiting"
	case strings.Contains(upper, "HOLD") || strings.Contains(upper, "HELD"):
		fixed = "held"
	}
	if start == "" || end == "" || tid == "" || (fixed == "" && state == "" && stateID == "") {
		r.b.present[tab] = true
		r.b.w.Warn("table "+tab, "Python GIL table of unknown shape (columns %s); not imported", strings.Join(sortedKeys(have), ","))
		return nil
	}
	var g gilRow
	var sid int64
	cols := []col{ct(&g.Start, start), ct(&g.End, end), ci(&g.GlobalTid, 0, tid)}
	if fixed == "" && state != "" {
		cols = append(cols, cs(&g.State, state))
	} else if fixed == "" {
		cols = append(cols, ci(&sid, -1, stateID))
	}
	return r.scan(ctx, tab, cols, start, func(row int) {
		switch {
		case fixed != "":
			g.State = fixed
		case state == "":
			g.State, _ = r.b.str(sid)
		}
		r.b.gil(tab, row, &g)
	})
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
