package kineto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Header keys: everything at the top level of the document other than
// traceEvents. They may come before or after the events; what they say is
// kept in the builder and applied in finish.

// devProps is one entry of deviceProperties.
type devProps struct {
	ID                         int64  `json:"id"`
	Name                       string `json:"name"`
	TotalGlobalMem             int64  `json:"totalGlobalMem"`
	ComputeMajor, ComputeMinor int32
	NumSms                     int32 `json:"numSms"`
}

// header handles one top-level key other than traceEvents.
func (b *builder) header(key string, c *cur) error {
	switch key {
	case "deviceProperties", "computeProperties":
		return b.deviceProperties(key, c)
	case "distributedInfo":
		return b.distributedInfo(c)
	case "baseTimeNanoseconds":
		return b.baseTime(c)
	case "schemaVersion", "cupti_version", "cuda_runtime_version", "cuda_driver_version",
		"hip_runtime_version", "hip_driver_version", "roctracer_version":
		return b.version(key, c)
	}
	return c.skip()
}

// deviceProperties reads the device list (computeProperties in 2021).
func (b *builder) deviceProperties(key string, c *cur) error {
	if c.next() != '[' {
		return c.skip()
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(c.b, &raw); err != nil {
		// Checked for grammar below; a wrong shape is only a warning.
		if err := c.skip(); err != nil {
			return err
		}
		b.w.Warn("header", "%s: unexpected shape: %v", key, err)
		return nil
	}
	for _, m := range raw {
		var d devProps
		d.ID = jsonInt(m["id"])
		_ = json.Unmarshal(m["name"], &d.Name)
		d.TotalGlobalMem = jsonInt(m["totalGlobalMem"])
		d.ComputeMajor = int32(jsonInt(m["computeMajor"]))
		d.ComputeMinor = int32(jsonInt(m["computeMinor"]))
		if _, ok := m["computeMajor"]; !ok { // 2021 computeProperties
			d.ComputeMajor = int32(jsonInt(m["major"]))
			d.ComputeMinor = int32(jsonInt(m["minor"]))
		}
		d.NumSms = int32(jsonInt(m["numSms"]))
		if d.NumSms == 0 {
			d.NumSms = int32(jsonInt(m["multiProcessorCount"]))
		}
		b.props = append(b.props, d)
	}
	c.i = len(c.b)
	return nil
}

// distributedInfo reads rank, world size, backend and process groups.
func (b *builder) distributedInfo(c *cur) error {
	t := b.t
	if c.next() != '{' {
		return c.skip()
	}
	var di struct {
		Backend   json.RawMessage              `json:"backend"`
		Rank      json.RawMessage              `json:"rank"`
		WorldSize json.RawMessage              `json:"world_size"`
		PGCount   json.RawMessage              `json:"pg_count"`
		NCCL      json.RawMessage              `json:"nccl_version"`
		PGConfig  []map[string]json.RawMessage `json:"pg_config"`
	}
	if err := json.Unmarshal(c.b, &di); err != nil {
		if err := c.skip(); err != nil {
			return err
		}
		b.w.Warn("header", "distributedInfo: unexpected shape: %v", err)
		return nil
	}
	if len(di.Rank) > 0 {
		if v, ok := parseInt(di.Rank); ok && v >= 0 && v < 1<<31 {
			t.Rank = int(v)
			b.haveRank = true
		}
	}
	if v, ok := parseInt(di.WorldSize); ok && v > 0 && v < 1<<31 {
		t.WorldSize = int(v)
	}
	if s := jsonScalar(di.Backend); s != "" {
		t.Meta["backend"] = s
	}
	if s := jsonScalar(di.NCCL); s != "" {
		t.Meta["nccl_version"] = s
	}
	if s := jsonScalar(di.PGCount); s != "" {
		t.Meta["pg_count"] = s
	}
	if len(di.PGConfig) > 0 {
		var parts []string
		for i, pg := range di.PGConfig {
			if i == 16 {
				parts = append(parts, fmt.Sprintf("... %d more", len(di.PGConfig)-16))
				break
			}
			name := jsonScalar(pg["pg_name"])
			desc := jsonScalar(pg["pg_desc"])
			if desc == "" {
				desc = jsonScalar(pg["uid"])
			}
			parts = append(parts, fmt.Sprintf("%s:%s:%s", name, desc, jsonScalar(pg["pg_size"])))
		}
		t.Meta["pg_config"] = strings.Join(parts, ",")
	}
	c.i = len(c.b)
	return nil
}

// baseTime reads baseTimeNanoseconds (a number or a string).
func (b *builder) baseTime(c *cur) error {
	t := b.t
	var num []byte
	switch ch := c.next(); {
	case ch == '-' || (ch >= '0' && ch <= '9'):
		var err error
		if num, err = c.number(); err != nil {
			return err
		}
	case ch == '"':
		raw, _, err := c.str()
		if err != nil {
			return err
		}
		num = raw
	default:
		if err := c.skip(); err != nil {
			return err
		}
		b.w.Warn("header", "baseTimeNanoseconds is not a number; ignored")
		return nil
	}
	v, ok := parseInt(num)
	if !ok || bytes.ContainsAny(num, ".eE") {
		b.w.Warn("header", "baseTimeNanoseconds %q is not an integer; ignored", num)
		return nil
	}
	b.base, b.hasBase = v, true
	t.Meta["baseTimeNanoseconds"] = strconv.FormatInt(v, 10)
	return nil
}

// version keeps a version key in Meta.
func (b *builder) version(key string, c *cur) error {
	t := b.t
	switch ch := c.next(); {
	case ch == '-' || (ch >= '0' && ch <= '9'):
		num, err := c.number()
		if err != nil {
			return err
		}
		t.Meta[key] = string(num)
	case ch == '"':
		raw, _, err := c.str()
		if err != nil {
			return err
		}
		t.Meta[key] = string(raw)
	default:
		return c.skip()
	}
	if key == "schemaVersion" {
		b.schema = t.Meta[key]
	}
	return nil
}

func jsonInt(m json.RawMessage) int64 {
	v, _ := parseInt(bytes.TrimSpace(m))
	return v
}

// jsonScalar renders a JSON string or number as text ("" otherwise).
func jsonScalar(m json.RawMessage) string {
	m = bytes.TrimSpace(m)
	if len(m) == 0 {
		return ""
	}
	if m[0] == '"' {
		var s string
		if json.Unmarshal(m, &s) == nil {
			return s
		}
		return ""
	}
	if m[0] == '-' || (m[0] >= '0' && m[0] <= '9') {
		return string(m)
	}
	return ""
}
