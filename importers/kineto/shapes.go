package kineto

import (
	"encoding/json"
	"sort"

	"github.com/tracedx/tracedx/model"
)

// opShape keeps the "Input Dims" and "Input type" of a GEMM-like operator
// (model.ShapedOp). An input that is not a list of integers (a scalar, a
// tensor list) gets nil dims; args that are not arrays at all are warned
// about and dropped.
func (b *builder) opShape(ev *event, idx int, off int64, name model.StringID) {
	var raw []json.RawMessage
	if err := json.Unmarshal(ev.a.inDims, &raw); err != nil {
		b.warn(idx, off, "%s: \"Input Dims\" is not an array; shapes dropped", ev.name)
		return
	}
	s := model.OpShape{ExternalID: ev.a.ext, Name: name, Dims: make([][]int64, len(raw))}
	for i, r := range raw {
		var d []int64
		if json.Unmarshal(r, &d) == nil {
			s.Dims[i] = d
		}
	}
	if ev.a.inTypes != nil && json.Unmarshal(ev.a.inTypes, &s.Types) != nil {
		b.warn(idx, off, "%s: \"Input type\" is not an array of strings; types dropped", ev.name)
		s.Types = nil
	}
	b.t.OpShapes = append(b.t.OpShapes, s)
}

// sortOpShapes orders the shapes by External id (stable: a repeated id
// keeps file order).
func (b *builder) sortOpShapes() {
	sort.SliceStable(b.t.OpShapes, func(i, j int) bool { return b.t.OpShapes[i].ExternalID < b.t.OpShapes[j].ExternalID })
}
