package batch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tracedx/tracedx/export/junit"
	"github.com/tracedx/tracedx/export/parquet"
	"github.com/tracedx/tracedx/internal/outfile"
	"github.com/tracedx/tracedx/model"
	"github.com/tracedx/tracedx/policy"
)

// Analyzer analyses one input file into a report.
type Analyzer func(ctx context.Context, path string) (*model.Report, error)

// Renderer writes a report in a format ("md", "json").
type Renderer func(w io.Writer, r *model.Report, format string) error

// Config is one batch run.
type Config struct {
	Items []Item // from Expand
	Out   string
	// Jobs is the number of workers (default: CPUs).
	Jobs int
	// Shard selects inputs: ShardOf(name, Shards) == Shard.
	Shard, Shards int
	// Policy gates each input (may be nil).
	Policy *policy.Policy
	// FailOn: findings at or above it fail the input (junit.Never: none).
	FailOn model.Severity
	// Rules lists the enabled rule IDs (JUnit cases of quiet rules).
	Rules []string
	// Fingerprint identifies the settings that shape outputs (tool version,
	// window, policy, ...): inputs done under another fingerprint are redone.
	Fingerprint string
	// Force redoes every input.
	Force bool
	// NoSync skips fsync of per-input files. Renames keep them atomic for
	// other processes and after a kill; only an OS crash or power loss can
	// then leave an empty file behind (which a rerun redoes: see isDone).
	NoSync bool
	// Formats are the report formats written per input (default md, json).
	Formats []string

	Analyze Analyzer
	Render  Renderer

	// Progress receives progress (stderr); TTY selects the redrawn bar.
	Progress io.Writer
	TTY      bool
	// Width is the terminal's width in columns (0: 100).
	Width int
	// Now is the clock (tests).
	Now func() time.Time
}

// Result is the outcome of one input.
type Result struct {
	Item        Item
	Status      string // parquet.StatusOK / StatusError; "" when not done (interrupted, outputs not written)
	Error       string
	Format      string
	Resumed     bool // done by an earlier run
	Errors      int  // findings by severity
	Warnings    int
	Infos       int
	FailOn      int // findings at or above FailOn
	GatesFailed int
	GatesTotal  int
}

// Failed reports whether the input failed its gates or fail-on.
func (r *Result) Failed() bool { return r.GatesFailed > 0 || r.FailOn > 0 }

// Summary is the outcome of a batch run (this shard).
type Summary struct {
	Shard, Shards int
	Total         int // inputs of all shards
	Results       []Result
	DatasetFiles  []string
	JUnitFile     string
	Elapsed       time.Duration
}

// Count returns how many results satisfy pred.
func (s *Summary) Count(pred func(*Result) bool) int {
	n := 0
	for i := range s.Results {
		if pred(&s.Results[i]) {
			n++
		}
	}
	return n
}

// state is the per-input state file; Digest is written last.
type state struct {
	Input       string `json:"input"`
	Fingerprint string `json:"fingerprint"`
	Status      string `json:"status"`
	Digest      string `json:"digest"`
}

// record is the per-input rows file: everything the end of the run needs.
type record struct {
	Rows   parquet.Rows
	Suite  junit.Suite
	Result Result
}

func (c *Config) dirs() (reports, stateDir, dataset string) {
	return filepath.Join(c.Out, "reports"), filepath.Join(c.Out, "state"), filepath.Join(c.Out, "dataset")
}

// OutputDirs are the folders a batch writes (out and below); Expand skips
// them (pass them as skip). Run leaves OutputMarker in out.
func OutputDirs(out string) []string {
	c := Config{Out: out}
	r, s, d := c.dirs()
	return []string{out, r, s, d}
}

// Run runs the batch. It returns an error only when the batch as a whole
// cannot proceed (output folder not writable, dataset not writable); the
// failure of one input is a Result with Status error.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	if cfg.Jobs <= 0 {
		cfg.Jobs = runtime.NumCPU()
	}
	if cfg.Shards <= 0 {
		cfg.Shards = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Formats) == 0 {
		cfg.Formats = []string{"md", "json"}
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	start := cfg.Now()
	_, stateDir, datasetDir := cfg.dirs()
	for _, d := range OutputDirs(cfg.Out) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(cfg.Out, OutputMarker), []byte("written by tracedx batch: not an input folder\n"), 0o644); err != nil {
		return nil, err
	}
	var mine []Item
	for _, it := range cfg.Items {
		if ShardOf(it.Name, cfg.Shards) == cfg.Shard {
			mine = append(mine, it)
		}
	}
	suffix := parquet.ShardSuffix(cfg.Shard, cfg.Shards)
	cfg.cleanTemps(mine, suffix)

	sum := &Summary{Shard: cfg.Shard, Shards: cfg.Shards, Total: len(cfg.Items), Results: make([]Result, len(mine))}
	prog := newProgress(cfg.Progress, cfg.TTY, len(mine), cfg.Now)
	if cfg.Width > 0 {
		prog.width = cfg.Width
	}
	if err := cfg.runItems(ctx, mine, sum, prog); err != nil {
		return sum, err
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	if err := cfg.writeDataset(mine, sum, stateDir, datasetDir, suffix); err != nil {
		return sum, err
	}
	sum.Elapsed = cfg.Now().Sub(start)
	return sum, nil
}

// runItems analyses mine on c.Jobs workers, filling sum.Results in input
// order; it stops feeding work when ctx ends and returns the first fatal
// error of any worker.
func (c *Config) runItems(ctx context.Context, mine []Item, sum *Summary, prog *progress) error {
	work := make(chan int)
	var wg sync.WaitGroup
	var fatalMu sync.Mutex
	var fatal error
	for w := 0; w < min(c.Jobs, max(1, len(mine))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				it := mine[i]
				prog.start(it.Name)
				res, err := c.one(ctx, it)
				if err != nil {
					fatalMu.Lock()
					if fatal == nil {
						fatal = err
					}
					fatalMu.Unlock()
				}
				sum.Results[i] = res
				prog.done(&res)
			}
		}()
	}
feed:
	for i := range mine {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	prog.finish()
	return fatal
}

// writeDataset writes the dataset and the JUnit file of this shard from
// the rows files in input order; a resumed input takes its counts from its
// record.
func (c *Config) writeDataset(mine []Item, sum *Summary, stateDir, datasetDir, suffix string) error {
	w, err := parquet.NewWriter(datasetDir, suffix, nil)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	var suites []junit.Suite
	for i, it := range mine {
		rec, err := readRecord(filepath.Join(stateDir, it.Safe+".rows.json"))
		if err != nil {
			w.Abort()
			return fmt.Errorf("dataset: rows of %s: %w", it.Name, err)
		}
		if err := w.Add(&rec.Rows); err != nil {
			w.Abort()
			return fmt.Errorf("dataset: %w", err)
		}
		suites = append(suites, rec.Suite)
		if sum.Results[i].Resumed {
			// Counts of a resumed input come from its record.
			r := rec.Result
			r.Item, r.Resumed = it, true
			sum.Results[i] = r
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	sum.DatasetFiles = w.Paths()
	name := "junit.xml"
	if suffix != "" {
		name = "junit-" + suffix + ".xml"
	}
	sum.JUnitFile = filepath.Join(c.Out, name)
	if err := outfile.Write(context.Background(), sum.JUnitFile, outfile.Options{}, func(wr io.Writer) error { return junit.Write(wr, suites) }); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	return nil
}

// one processes one input. The error is fatal for the batch (outputs not
// writable); input problems are recorded in the result.
func (c *Config) one(ctx context.Context, it Item) (res Result, fatal error) {
	reportsDir, stateDir, _ := c.dirs()
	res = Result{Item: it, Status: parquet.StatusOK}
	statePath := filepath.Join(stateDir, it.Safe+".json")
	rowsPath := filepath.Join(stateDir, it.Safe+".rows.json")
	in := parquet.Input{Path: it.Name, Status: parquet.StatusOK, Rank: model.NoRank}

	fail := func(err error) (Result, error) {
		res.Status, res.Error = parquet.StatusError, err.Error()
		in.Status, in.Error = parquet.StatusError, err.Error()
		for _, f := range c.Formats {
			os.Remove(filepath.Join(reportsDir, it.Safe+"."+f))
		}
		rec := &record{Rows: parquet.Rows{Input: in}, Suite: junit.ErrorSuite(it.Name, err.Error()), Result: res}
		return res, c.commit(rowsPath, statePath, rec, in.Digest)
	}
	if it.Err != nil {
		return fail(it.Err)
	}
	digest, size, err := digestFile(it.Path)
	if err != nil {
		return fail(err)
	}
	in.Digest, in.Bytes = digest, size
	if !c.Force && c.isDone(statePath, rowsPath, it, digest) {
		res.Resumed = true
		return res, nil
	}
	rep, err := c.analyze(ctx, it.Path)
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return fail(err)
	}
	if len(rep.Inputs) > 0 {
		res.Format = string(rep.Inputs[0].Format)
		in.Format = res.Format
		in.Rank = rep.Inputs[0].Rank
	}
	// Render every report first: a report that cannot be rendered is this
	// input's failure; a file that cannot be written stops the batch.
	rendered := make([][]byte, len(c.Formats))
	for i, f := range c.Formats {
		var buf bytes.Buffer
		if err := c.render(&buf, rep, f); err != nil {
			return fail(fmt.Errorf("rendering the %s report: %w", f, err))
		}
		rendered[i] = buf.Bytes()
	}
	for i, f := range c.Formats {
		path := filepath.Join(reportsDir, it.Safe+"."+f)
		if err := c.writeAtomic(path, func(w io.Writer) error { _, err := w.Write(rendered[i]); return err }); err != nil {
			err = fmt.Errorf("writing %s: %w", path, err)
			res.Status, res.Error = "", err.Error() // not done: neither ok nor unreadable
			return res, err
		}
	}
	gates := c.Policy.Evaluate(rep)
	res.GatesTotal = len(gates)
	for _, g := range gates {
		if !g.Passed {
			res.GatesFailed++
		}
	}
	for _, f := range rep.Findings {
		switch f.Severity {
		case model.SevError:
			res.Errors++
		case model.SevWarning:
			res.Warnings++
		default:
			res.Infos++
		}
		if f.Severity >= c.FailOn {
			res.FailOn++
		}
	}
	in.GatesFailed, in.Findings = res.GatesFailed, len(rep.Findings)
	rows := parquet.Rows{Input: in, Findings: parquet.FindingRows(rep), Kernels: parquet.KernelRows(rep)}
	parquet.SummaryRows(&rows, rep)
	for _, s := range policy.Metrics(rep) {
		rows.Metrics = append(rows.Metrics, parquet.Metric{Device: s.Device, Scope: s.Scope, Name: s.Name, Value: s.Value})
	}
	suite := junit.FromReport(it.Name, rep, gates, junit.Options{FailOn: c.FailOn, Rules: c.Rules})
	rec := &record{Rows: rows, Suite: suite, Result: res}
	return res, c.commit(rowsPath, statePath, rec, digest)
}

// analyze runs the analyzer, turning a panic into an input error.
func (c *Config) analyze(ctx context.Context, path string) (rep *model.Report, err error) {
	defer func() {
		if r := recover(); r != nil {
			rep, err = nil, fmt.Errorf("%s: internal error: %v", path, r)
		}
	}()
	rep, err = c.Analyze(ctx, path)
	if err == nil && rep == nil {
		err = errors.New("analysis returned no report")
	}
	return rep, err
}

// render runs the renderer, turning a panic into an error.
func (c *Config) render(w io.Writer, rep *model.Report, format string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return c.Render(w, rep, format)
}

// commit writes the rows file, then the state file (the commit point).
func (c *Config) commit(rowsPath, statePath string, rec *record, digest string) error {
	rec.Result.Resumed = false
	if err := c.writeAtomic(rowsPath, func(w io.Writer) error { return json.NewEncoder(w).Encode(rec) }); err != nil {
		return fmt.Errorf("writing %s: %w", rowsPath, err)
	}
	st := state{Input: rec.Rows.Input.Path, Fingerprint: c.Fingerprint, Status: rec.Rows.Input.Status, Digest: digest}
	if err := c.writeAtomic(statePath, func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(st)
	}); err != nil {
		return fmt.Errorf("writing %s: %w", statePath, err)
	}
	return nil
}

// isDone reports whether an earlier run finished this input with the same
// digest and fingerprint and all its outputs are in place.
func (c *Config) isDone(statePath, rowsPath string, it Item, digest string) bool {
	data, err := os.ReadFile(statePath)
	if err != nil {
		return false
	}
	var st state
	if json.Unmarshal(data, &st) != nil {
		return false
	}
	if st.Digest != digest || st.Fingerprint != c.Fingerprint || st.Input != it.Name {
		return false
	}
	if _, err := readRecord(rowsPath); err != nil {
		return false
	}
	if st.Status == parquet.StatusOK {
		reportsDir, _, _ := c.dirs()
		for _, f := range c.Formats {
			if st, err := os.Stat(filepath.Join(reportsDir, it.Safe+"."+f)); err != nil || st.Size() == 0 {
				return false
			}
		}
	}
	return true
}

func readRecord(path string) (*record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rec, nil
}

func digestFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// writeAtomic writes a per-input file atomically (fsynced unless NoSync).
func (c *Config) writeAtomic(path string, write func(io.Writer) error) error {
	return outfile.Write(context.Background(), path, outfile.Options{NoSync: c.NoSync}, write)
}

// cleanTemps removes temporary files a killed run of this shard left behind
// (only those of this shard's inputs and dataset files, since other shards
// may be writing into the same folder right now).
func (c *Config) cleanTemps(mine []Item, suffix string) {
	reportsDir, stateDir, datasetDir := c.dirs()
	mineFiles := map[string]bool{}
	for _, it := range mine {
		for _, f := range c.Formats {
			mineFiles[it.Safe+"."+f] = true
		}
		mineFiles[it.Safe+".json"] = true
		mineFiles[it.Safe+".rows.json"] = true
	}
	for _, t := range parquet.Tables {
		mineFiles[parquet.FileName(t, suffix)] = true
	}
	for _, dir := range []string{reportsDir, stateDir, datasetDir} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			n := e.Name()
			i := strings.LastIndex(n, ".tmp-")
			if !strings.HasPrefix(n, ".") || i < 0 {
				continue
			}
			if mineFiles[n[1:i]] {
				os.Remove(filepath.Join(dir, n))
			}
		}
	}
}
