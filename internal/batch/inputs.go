package batch

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Item is one input of a batch.
type Item struct {
	// Path is the file to read.
	Path string
	// Name identifies the input in reports, the dataset and sharding: the
	// cleaned, slash-separated path as found (argument, or folder argument
	// joined with the path below it, or manifest entry).
	Name string
	// Safe is the file-name-safe form of Name used for reports/ and state/.
	Safe string
	// Err is set when the argument itself could not be read (missing file).
	Err error `json:"-"`
}

// Detector tells whether a file found while walking a folder is a known
// trace format. Files given explicitly are always kept.
type Detector func(path string) bool

// OutputMarker is the file batch leaves in its output folder: a folder
// holding it is never walked for inputs (a rerun of `batch d --out d/out`
// must not read its own reports and state files as traces).
const OutputMarker = ".tracedx-output"

// Expand turns arguments into the sorted, de-duplicated list of inputs.
// args are files, folders (walked recursively; files are kept when detect
// accepts them; hidden files and folders are skipped, and so are the
// folders in skip, folders holding OutputMarker and files tracedx wrote; a
// file that cannot be opened is an input with Err set) or "@FILE" manifests;
// manifests lists more manifests. A manifest has one path per line; blank
// lines and lines starting with # are ignored; relative paths are relative
// to the manifest's folder. An argument that does not exist becomes an item
// with Err set; an unreadable manifest is an error.
func Expand(args, manifests []string, detect Detector, skip ...string) ([]Item, error) {
	e := &expander{detect: detect, seen: map[string]bool{}}
	for _, d := range skip {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			e.skipDirs = append(e.skipDirs, st)
		}
	}
	for _, m := range manifests {
		if err := e.readManifest(m, 0); err != nil {
			return nil, err
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "@") && len(a) > 1 {
			if err := e.readManifest(a[1:], 0); err != nil {
				return nil, err
			}
			continue
		}
		if err := e.walk(a); err != nil {
			return nil, err
		}
	}
	items := e.items
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	assignSafeNames(items)
	return items, nil
}

// expander collects Expand's items, each name once.
type expander struct {
	detect   Detector
	skipDirs []os.FileInfo
	items    []Item
	seen     map[string]bool
}

// add lists path (with err when it cannot be read) unless already listed.
func (e *expander) add(path string, err error) {
	name := filepath.ToSlash(filepath.Clean(path))
	if e.seen[name] {
		return
	}
	e.seen[name] = true
	e.items = append(e.items, Item{Path: filepath.Clean(path), Name: name, Err: err})
}

// walk adds arg: a file as it is, a folder by the trace files below it.
func (e *expander) walk(arg string) error {
	st, err := os.Stat(arg)
	if err != nil {
		e.add(arg, err)
		return nil
	}
	if !st.IsDir() {
		e.add(arg, nil)
		return nil
	}
	found, err := e.findIn(arg)
	if err != nil {
		e.add(arg, err)
		return nil
	}
	for _, p := range found {
		e.add(p, nil)
	}
	return nil
}

// findIn walks the folder arg and returns the files detect accepts,
// skipping hidden entries, output folders and files tracedx wrote; an
// unreadable folder or file below arg is added as an input error.
func (e *expander) findIn(arg string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == arg {
				return err
			}
			e.add(p, err) // an unreadable folder below is an input error
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p != arg && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != arg && isOutputDir(p, e.skipDirs) { // `batch d --out d` still reads d
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		switch head, err := readHead(p); {
		case err != nil:
			e.add(p, err) // listed as unreadable, not skipped silently
		case writtenByTracedx(head):
		case e.detect == nil || e.detect(p):
			found = append(found, p)
		}
		return nil
	})
	return found, err
}

// readManifest walks each path of the manifest at path, following @
// lines into nested manifests up to 8 deep.
func (e *expander) readManifest(path string, depth int) error {
	if depth > 8 {
		return fmt.Errorf("%s: manifests nested too deeply", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	base := filepath.Dir(path)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if strings.HasPrefix(s, "@") {
			m := s[1:]
			if !filepath.IsAbs(m) {
				m = filepath.Join(base, m)
			}
			if err := e.readManifest(m, depth+1); err != nil {
				return fmt.Errorf("%s:%d: %w", path, line, err)
			}
			continue
		}
		if !filepath.IsAbs(s) {
			s = filepath.Join(base, s)
		}
		if err := e.walk(s); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", path, line, err)
	}
	return nil
}

// isOutputDir reports whether dir is one of skip or holds OutputMarker.
func isOutputDir(dir string, skip []os.FileInfo) bool {
	if _, err := os.Lstat(filepath.Join(dir, OutputMarker)); err == nil {
		return true
	}
	if len(skip) == 0 {
		return false
	}
	st, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for _, s := range skip {
		if os.SameFile(st, s) {
			return true
		}
	}
	return false
}

// readHead opens path and reads its first bytes, decompressed when the file
// is gzipped (tracedx writes gzipped Perfetto exports): an input that cannot
// be opened is reported rather than skipped.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	if n < 2 || buf[0] != 0x1f || buf[1] != 0x8b {
		return buf[:n], nil
	}
	// A gzip stream: its first decompressed bytes. One that does not
	// decompress is left to the importers to judge (and report).
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return buf[:n], nil
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return buf[:n], nil
	}
	defer zr.Close()
	m, err := io.ReadFull(zr, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return buf[:n], nil
	}
	return buf[:m], nil
}

// tracedxMark matches the start of the JSON files tracedx writes: reports
// ("tool": {"name": "tracedx"}), Perfetto exports ("otherData":
// {"tool":"tracedx"}) and batch state files ({"input": …, "fingerprint"}
// and {"Rows": …}).
var tracedxMark = regexp.MustCompile(`^\s*\{\s*(?:"schema_version"\s*:\s*"[^"]*"\s*,\s*"tool"\s*:\s*\{\s*"name"\s*:\s*"tracedx"|"displayTimeUnit"\s*:\s*"ns"\s*,\s*"otherData"\s*:\s*\{\s*"tool"\s*:\s*"tracedx"|"input"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"fingerprint"|"Rows"\s*:)`)

// writtenByTracedx reports whether a file's first bytes are those of a
// file tracedx wrote (found while walking a folder, it is not an input).
func writtenByTracedx(head []byte) bool { return tracedxMark.Match(head) }

// safeName maps a name onto one file-name component.
func safeName(name string) string {
	var parts []string
	for _, p := range strings.Split(name, "/") {
		if p == "" || p == "." || p == ".." {
			continue
		}
		parts = append(parts, p)
	}
	s := strings.Join(parts, "__")
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	s = strings.TrimLeft(string(b), ".")
	if len(s) > 150 {
		s = s[len(s)-150:]
	}
	if s == "" {
		s = "input"
	}
	return s
}

func shortHash(name string) string {
	h := sha256.Sum256([]byte(name))
	return hex.EncodeToString(h[:4])
}

// assignSafeNames gives every item a unique safe name; names that collide
// (case-insensitively) get a short hash of the full name appended.
func assignSafeNames(items []Item) {
	count := map[string]int{}
	for i := range items {
		items[i].Safe = safeName(items[i].Name)
		count[strings.ToLower(items[i].Safe)]++
	}
	for i := range items {
		s := items[i].Safe
		if count[strings.ToLower(s)] > 1 || len(s) == 150 {
			items[i].Safe = s + "-" + shortHash(items[i].Name)
		}
	}
}

// ShardOf returns the shard (0..n-1) of an input name: FNV-1a of the name
// modulo n. It depends only on the name, so every shard of a run computes
// the same partition, and adding inputs never moves others.
func ShardOf(name string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return int(h.Sum64() % uint64(n))
}

// ParseShard parses "i/n" (0 <= i < n).
func ParseShard(s string) (i, n int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	if _, err := fmt.Sscanf(s, "%d/%d", &i, &n); err != nil || fmt.Sprintf("%d/%d", i, n) != strings.TrimSpace(s) {
		return 0, 0, fmt.Errorf("--shard %q: want i/n, e.g. 0/3", s)
	}
	if n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: want 0 <= i < n", s)
	}
	return i, n, nil
}
