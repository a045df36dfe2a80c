package kineto

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/tracedx/tracedx/importers"
)

// shapesJSON has a recorded aten::addmm, an aten::linear with a tensor
// list, an op whose shapes are not kept, and spoiled "Input Dims".
const shapesJSON = `{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":1,"dur":20,"args":{"External id":9,"Input Dims":[[4,16],[8,16],[[1],[2]]],"Input type":["c10::BFloat16","c10::BFloat16","TensorList"]}},
{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":2,"dur":10,"args":{"External id":3,"Input Dims":[[8],[4,16],[16,8],[],[]],"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"]}},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":30,"dur":1,"args":{"External id":11,"Input Dims":[[4],[4]]}},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":40,"dur":1,"args":{"External id":12,"Input Dims":"oops","Input type":[1,2]}}
]}`

func TestOpShapes(t *testing.T) {
	tr, err := parse(context.Background(), bytes.NewReader([]byte(shapesJSON)), "shapes.json", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(tr.OpShapes) != 2 {
		t.Fatalf("%+v", tr.OpShapes)
	}
	a, l := tr.OpShapes[0], tr.OpShapes[1]
	if a.ExternalID != 3 || tr.Str(a.Name) != "aten::addmm" || !reflect.DeepEqual(a.Dims, [][]int64{{8}, {4, 16}, {16, 8}, {}, {}}) || a.Types[3] != "Scalar" {
		t.Errorf("addmm: %+v", a)
	}
	if l.ExternalID != 9 || l.Dims[2] != nil || len(l.Types) != 3 {
		t.Errorf("linear: %+v", l)
	}
	if len(tr.Warnings) != 1 {
		t.Errorf("warnings: %+v", tr.Warnings)
	}
}
