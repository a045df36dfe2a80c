package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Policy is a parsed policy file.
type Policy struct {
	// Path is the file the policy was read from (for messages).
	Path string
	// Rules holds per-rule settings by rule ID.
	Rules map[string]*Rule
	// Gates are the gate conditions, in file order.
	Gates []Gate
	// disabledLines maps rule IDs of the top-level disabled list to their lines.
	disabledLines map[string]int
}

// Rule is the policy of one rule.
type Rule struct {
	ID string
	// Enabled is false when the rule is disabled (by "enabled: false" or the
	// top-level "disabled" list).
	Enabled bool
	// Severity overrides the rule's severity when non-nil.
	Severity *model.Severity
	// Params overrides parameters by name.
	Params map[string]float64
	// Line is the line of the rule's key; ParamLines the lines of its params.
	Line       int
	ParamLines map[string]int
}

// Gate is one condition over a report metric.
type Gate struct {
	// Name labels the gate in reports; it defaults to the condition text.
	Name   string
	Metric string
	// Min and Max are the inclusive limits; at least one is set.
	Min, Max *float64
	// Optional gates pass (skipped) when the metric is not measurable.
	Optional bool
	Line     int
}

// Condition returns the gate as text, e.g. "gpu.idle_pct <= 20".
func (g Gate) Condition() string {
	var parts []string
	if g.Min != nil {
		parts = append(parts, g.Metric+" >= "+FormatValue(*g.Min))
	}
	if g.Max != nil {
		parts = append(parts, g.Metric+" <= "+FormatValue(*g.Max))
	}
	return strings.Join(parts, " and ")
}

// Label returns the gate's name, or its condition when unnamed.
func (g Gate) Label() string {
	if g.Name != "" {
		return g.Name
	}
	return g.Condition()
}

// FormatValue formats a number the same way everywhere (shortest exact form).
func FormatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// file is the wire form of the policy file. Unknown keys are errors.
type file struct {
	Version  int                 `yaml:"version"`
	Rules    map[string]fileRule `yaml:"rules"`
	Disabled []string            `yaml:"disabled"`
	Gates    []fileGate          `yaml:"gates"`
}

type fileRule struct {
	Enabled  *bool              `yaml:"enabled"`
	Severity string             `yaml:"severity"`
	Params   map[string]float64 `yaml:"params"`
}

type fileGate struct {
	Name     string   `yaml:"name"`
	Metric   string   `yaml:"metric"`
	Min      *float64 `yaml:"min"`
	Max      *float64 `yaml:"max"`
	Optional bool     `yaml:"optional"`
}

// Error is a policy file problem at a line.
type Error struct {
	File string
	Line int // 0 when unknown
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errors is a list of policy problems; its message names every one.
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Load reads and checks the policy file at path. Errors name file:line.
func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return Parse(path, data)
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// Parse parses policy text; name is used in messages.
func Parse(name string, data []byte) (*Policy, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlErrors(name, err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlErrors(name, err)
	}
	if f.Version != 0 && f.Version != 1 {
		return nil, &Error{File: name, Line: lineOf(&root, "version"), Msg: fmt.Sprintf("unsupported policy version %d (want 1)", f.Version)}
	}
	p := &Policy{Path: name, Rules: map[string]*Rule{}, disabledLines: map[string]int{}}
	var errs Errors
	bad := func(line int, format string, args ...any) {
		errs = append(errs, &Error{File: name, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	rulesNode := child(docNode(&root), "rules")
	ids := make([]string, 0, len(f.Rules))
	for id := range f.Rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fr := f.Rules[id]
		r := &Rule{ID: id, Enabled: true, Params: map[string]float64{}, ParamLines: map[string]int{}}
		r.Line = keyLine(rulesNode, id)
		if fr.Enabled != nil {
			r.Enabled = *fr.Enabled
		}
		rn := child(rulesNode, id)
		if fr.Severity != "" {
			sev, err := model.ParseSeverity(fr.Severity)
			if err != nil {
				bad(keyLine(rn, "severity"), "rule %s: %v", id, err)
			} else {
				r.Severity = &sev
			}
		}
		pn := child(rn, "params")
		for k, v := range fr.Params {
			r.Params[k] = v
			r.ParamLines[k] = keyLine(pn, k)
		}
		p.Rules[id] = r
	}
	if dn := child(docNode(&root), "disabled"); dn != nil {
		for _, item := range dn.Content {
			p.disabledLines[item.Value] = item.Line
		}
	}
	for _, id := range f.Disabled {
		if id == "" {
			bad(lineOf(&root, "disabled"), "empty rule ID in disabled")
			continue
		}
		r := p.Rules[id]
		if r == nil {
			r = &Rule{ID: id, Params: map[string]float64{}, ParamLines: map[string]int{}, Line: p.disabledLines[id]}
			p.Rules[id] = r
		}
		r.Enabled = false
	}
	var gateNodes []*yaml.Node
	if gn := child(docNode(&root), "gates"); gn != nil {
		gateNodes = gn.Content
	}
	for i, fg := range f.Gates {
		g := Gate{Name: fg.Name, Metric: strings.TrimSpace(fg.Metric), Min: fg.Min, Max: fg.Max, Optional: fg.Optional}
		if i < len(gateNodes) {
			g.Line = gateNodes[i].Line
		}
		switch {
		case g.Metric == "":
			bad(g.Line, "gate %d has no metric", i+1)
		case !ValidMetricName(g.Metric):
			bad(keyLine(gateNodeAt(gateNodes, i), "metric"), "gate %d: unknown metric %q (names start with one of %s; see docs/policy.md)", i+1, g.Metric, strings.Join(metricPrefixes, ", "))
		}
		for _, lim := range []struct {
			key string
			v   *float64
		}{{"min", g.Min}, {"max", g.Max}} {
			if err := checkLimit(lim.v); err != nil {
				bad(keyLine(gateNodeAt(gateNodes, i), lim.key), "gate %d (%s): %s: %v", i+1, g.Metric, lim.key, err)
			}
		}
		if g.Min == nil && g.Max == nil {
			bad(g.Line, "gate %d (%s) has neither min nor max", i+1, g.Metric)
		}
		if g.Min != nil && g.Max != nil && *g.Min > *g.Max {
			bad(g.Line, "gate %d (%s): min %s is above max %s", i+1, g.Metric, FormatValue(*g.Min), FormatValue(*g.Max))
		}
		p.Gates = append(p.Gates, g)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

func gateNodeAt(nodes []*yaml.Node, i int) *yaml.Node {
	if i < len(nodes) {
		return nodes[i]
	}
	return nil
}

// yamlErrors turns yaml.v3 errors into file:line errors.
func yamlErrors(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var es Errors
		for _, msg := range te.Errors {
			es = append(es, lineError(name, msg))
		}
		return es
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return lineError(name, msg)
}

func lineError(name, msg string) *Error {
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		inner := m[2]
		// "field foo not found in type policy.fileRule" → "unknown key "foo""
		if strings.HasPrefix(inner, "field ") && strings.Contains(inner, " not found in type ") {
			key := strings.TrimPrefix(inner[:strings.Index(inner, " not found in type ")], "field ")
			inner = fmt.Sprintf("unknown key %q", key)
		}
		return &Error{File: name, Line: n, Msg: inner}
	}
	return &Error{File: name, Msg: msg}
}

func docNode(root *yaml.Node) *yaml.Node {
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		return root.Content[0]
	}
	return root
}

// child returns the value node of key in mapping node n.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// keyLine returns the line of key in mapping node n (0 when absent).
func keyLine(n *yaml.Node, key string) int {
	if n == nil || n.Kind != yaml.MappingNode {
		if n != nil {
			return n.Line
		}
		return 0
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return n.Line
}

func lineOf(root *yaml.Node, key string) int { return keyLine(docNode(root), key) }

// DetectorConfig returns the detector configuration the policy asks for.
func (p *Policy) DetectorConfig() detectors.Config {
	cfg := detectors.Config{
		Params:   map[string]map[string]float64{},
		Disabled: map[string]bool{},
		Severity: map[string]model.Severity{},
	}
	if p == nil {
		return cfg
	}
	for id, r := range p.Rules {
		if !r.Enabled {
			cfg.Disabled[id] = true
		}
		if r.Severity != nil {
			cfg.Severity[id] = *r.Severity
		}
		if len(r.Params) > 0 {
			m := make(map[string]float64, len(r.Params))
			for k, v := range r.Params {
				m[k] = v
			}
			cfg.Params[id] = m
		}
	}
	return cfg
}

// Check verifies the policy against a rule catalogue: every rule ID and
// parameter name must exist. Errors name file:line.
func (p *Policy) Check(list []*detectors.Detector) error {
	byID := map[string]*detectors.Detector{}
	for _, d := range list {
		byID[d.ID] = d
	}
	var errs Errors
	ids := make([]string, 0, len(p.Rules))
	for id := range p.Rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := p.Rules[id]
		d := byID[id]
		if d == nil {
			errs = append(errs, &Error{File: p.Path, Line: r.Line, Msg: fmt.Sprintf("unknown rule %q (see `tracedx rules`)", id)})
			continue
		}
		names := make([]string, 0, len(r.Params))
		for k := range r.Params {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			var found *detectors.Param
			var known []string
			for i, prm := range d.Params {
				known = append(known, prm.Name)
				if prm.Name == k {
					found = &d.Params[i]
				}
			}
			if found == nil {
				errs = append(errs, &Error{File: p.Path, Line: r.ParamLines[k], Msg: fmt.Sprintf("rule %s has no parameter %q (it has: %s)", id, k, strings.Join(known, ", "))})
			} else if err := CheckParamValue(*found, r.Params[k]); err != nil {
				errs = append(errs, &Error{File: p.Path, Line: r.ParamLines[k], Msg: fmt.Sprintf("rule %s parameter %s: %v", id, k, err)})
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
