package uselite

import (
	"encoding/binary"
	"math"
	"strconv"
)

// A minimal ONNX protobuf writer: just the messages and fields this package
// needs to describe one inference graph (onnx.proto3, field numbers from the
// ONNX specification). Building the model in memory keeps the repository free
// of converted model files and of a Python conversion step.

const (
	onnxFloat = 1 // TensorProto.FLOAT
	onnxInt64 = 7 // TensorProto.INT64

	attrFloat = 1 // AttributeProto.FLOAT
	attrInt   = 2 // AttributeProto.INT
	attrInts  = 7 // AttributeProto.INTS
)

type pb []byte

func (b pb) tag(field, wire int) pb { return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire)) }

func (b pb) varint(field int, v uint64) pb { return binary.AppendUvarint(b.tag(field, 0), v) }

func (b pb) bytes(field int, v []byte) pb {
	b = binary.AppendUvarint(b.tag(field, 2), uint64(len(v)))
	return append(b, v...)
}

func (b pb) str(field int, s string) pb { return b.bytes(field, []byte(s)) }

func (b pb) fixed32(field int, v uint32) pb {
	return binary.LittleEndian.AppendUint32(b.tag(field, 5), v)
}

// attribute is an encoded AttributeProto.
type attribute pb

func intAttr(name string, v int64) attribute {
	return attribute(pb(nil).str(1, name).varint(3, uint64(v)).varint(20, attrInt))
}

func floatAttr(name string, v float32) attribute {
	return attribute(pb(nil).str(1, name).fixed32(2, math.Float32bits(v)).varint(20, attrFloat))
}

func intsAttr(name string, vs ...int64) attribute {
	b := pb(nil).str(1, name)
	for _, v := range vs {
		b = b.varint(8, uint64(v))
	}
	return attribute(b.varint(20, attrInts))
}

// onnxGraph accumulates nodes, initializers, inputs and outputs.
type onnxGraph struct {
	nodes, inits, inputs, outputs []pb
	next                          int
}

// op appends a node with a fresh output name and returns that name.
func (g *onnxGraph) op(opType string, inputs []string, attrs ...attribute) string {
	return g.opN(opType, inputs, 1, attrs...)[0]
}

// opN appends a node with n fresh outputs.
func (g *onnxGraph) opN(opType string, inputs []string, n int, attrs ...attribute) []string {
	outs := make([]string, n)
	for i := range outs {
		g.next++
		outs[i] = opType + "_" + strconv.Itoa(g.next)
	}
	g.node(opType, inputs, outs, attrs...)
	return outs
}

// node appends a node with the given output names.
func (g *onnxGraph) node(opType string, inputs, outputs []string, attrs ...attribute) {
	b := pb(nil)
	for _, in := range inputs {
		b = b.str(1, in)
	}
	for _, out := range outputs {
		b = b.str(2, out)
	}
	b = b.str(3, outputs[0]).str(4, opType)
	for _, a := range attrs {
		b = b.bytes(5, a)
	}
	g.nodes = append(g.nodes, b)
}

// floats adds a float32 initializer and returns its name.
func (g *onnxGraph) floats(name string, dims []int, data []float32) string {
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	g.inits = append(g.inits, tensorProto(name, onnxFloat, dims, raw))
	return name
}

// ints adds an int64 initializer and returns its name.
func (g *onnxGraph) ints(name string, dims []int, data ...int64) string {
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	g.inits = append(g.inits, tensorProto(name, onnxInt64, dims, raw))
	return name
}

func tensorProto(name string, dtype int, dims []int, raw []byte) pb {
	b := pb(nil)
	for _, d := range dims {
		b = b.varint(1, uint64(d))
	}
	return b.varint(2, uint64(dtype)).str(8, name).bytes(9, raw)
}

// valueInfo encodes a ValueInfoProto; a dimension given as a string is
// symbolic (dynamic), an int is fixed.
func valueInfo(name string, dtype int, dims ...any) pb {
	shape := pb(nil)
	for _, d := range dims {
		dim := pb(nil)
		switch v := d.(type) {
		case int:
			dim = dim.varint(1, uint64(v))
		case string:
			dim = dim.str(2, v)
		}
		shape = shape.bytes(1, dim)
	}
	tensorType := pb(nil).varint(1, uint64(dtype)).bytes(2, shape)
	typ := pb(nil).bytes(1, tensorType)
	return pb(nil).str(1, name).bytes(2, typ)
}

// model encodes the ModelProto: IR version 8, default-domain opset 17.
func (g *onnxGraph) model(name string) []byte {
	graph := pb(nil)
	for _, n := range g.nodes {
		graph = graph.bytes(1, n)
	}
	graph = graph.str(2, name)
	for _, t := range g.inits {
		graph = graph.bytes(5, t)
	}
	for _, in := range g.inputs {
		graph = graph.bytes(11, in)
	}
	for _, out := range g.outputs {
		graph = graph.bytes(12, out)
	}
	opset := pb(nil).str(1, "").varint(2, 17)
	m := pb(nil).varint(1, 8).str(2, "stratakb-uselite").bytes(7, graph).bytes(8, opset)
	return m
}
