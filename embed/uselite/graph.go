package uselite

import (
	"fmt"
	"math"
)

// Weight names in the TF.js manifest. The encoder is a two-layer transformer
// ("KonaTransformer"): layer 0 works at width 256 and widens its residual to
// 512 with a dense projection; layer 1 works at 512. Both use four heads.
const (
	prefixApply = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
	prefixVar   = "module/Encoder_en/KonaTransformer/Encode/"
	prefixStack = "module_apply_default/Encoder_en/KonaTransformer/Encode/TransformerStack/"

	wEmbeddings   = "module/Embeddings_en"
	wTimingScales = prefixStack + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1"
	wTanhWeights  = "module/Encoder_en/hidden_layers/tanh_layer_0/weights"
	wTanhBias     = "module/Encoder_en/hidden_layers/tanh_layer_0/bias"
)

const (
	// maxPieces is where the model clips its input: later pieces are ignored.
	maxPieces = MaxPieces
	// dims is the width of the output vectors.
	dims = Dims
	// layerNormEpsilon is the variance epsilon of every layer norm.
	layerNormEpsilon = 1e-6
	// heads is the number of attention heads in both layers.
	heads = 4
)

// weightSet looks weights up by name and checks their shapes, so a model file
// that differs from the one this port was written against fails loudly.
type weightSet map[string]tensor

func (w weightSet) get(name string, shape ...int) ([]float32, error) {
	t, ok := w[name]
	if !ok {
		return nil, fmt.Errorf("weight %s missing from the model", name)
	}
	if fmt.Sprint(t.shape) != fmt.Sprint(shape) {
		return nil, fmt.Errorf("weight %s has shape %v, want %v", name, t.shape, shape)
	}
	return t.data, nil
}

// buildGraph writes the ONNX model equivalent to the TF.js graph.
//
// The TF.js graph takes sparse input (indices, values), densifies it and
// gathers/scatters the valid positions around every position-wise step. The
// ONNX graph takes the dense form directly: ids [batch, len] (int64, any id at
// padded positions) and mask [batch, len] (1 for a piece, 0 for padding).
// Position-wise steps run on padded rows too; those rows are excluded from
// attention by the additive bias and from the mean by the mask, so the result
// for a text does not depend on what it is batched with.
func buildGraph(w weightSet) ([]byte, error) {
	g := &onnxGraph{}
	var firstErr error
	get := func(name string, shape ...int) []float32 {
		d, err := w.get(name, shape...)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return d
	}
	param := func(name string, shape ...int) string {
		return g.floats(name, shape, get(name, shape...))
	}

	g.inputs = append(g.inputs,
		valueInfo("ids", onnxInt64, "batch", "len"),
		valueInfo("mask", onnxFloat, "batch", "len"))
	g.outputs = append(g.outputs, valueInfo("embedding", onnxFloat, "batch", dims))

	// Input layer: the graph adds the timing signal to the embeddings and
	// then adds that sum back onto the embeddings as a residual branch, so
	// the first layer sees 2 × embedding + timing. The factor 2 is folded
	// into the table.
	emb := get(wEmbeddings, 8002, 256)
	emb2 := make([]float32, len(emb))
	for i, v := range emb {
		emb2[i] = 2 * v
	}
	table := g.floats("embeddings_x2", []int{8002, 256}, emb2)
	timing := g.floats("timing_signal", []int{maxPieces, 256}, timingSignal(get(wTimingScales, 1, 128)))

	length := g.op("Shape", []string{"ids"}, intAttr("start", 1), intAttr("end", 2))
	zero := g.ints("zero_1d", []int{1}, 0)
	axis0 := zero
	tim := g.op("Slice", []string{timing, zero, length, axis0})
	x := g.op("Add", []string{g.op("Gather", []string{table, "ids"}, intAttr("axis", 0)), tim})

	// Attention bias: -1e9 on padded keys, broadcast over heads and queries.
	one := g.floats("one", nil, []float32{1})
	negInf := g.floats("neg_1e9", nil, []float32{-1e9})
	axes12 := g.ints("axes_1_2", []int{2}, 1, 2)
	bias := g.op("Unsqueeze", []string{g.op("Mul", []string{g.op("Sub", []string{one, "mask"}), negInf}), axes12})

	// Layer 0, width 256, with the residual widened to 512.
	l0 := prefixApply + "Layer_0/TransformerLayer/"
	v0 := prefixVar + "Layer_0/TransformerLayer/"
	ln := layerNorm(g, x, param(l0+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", 256),
		param(l0+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", 256))
	residual := dense(g, x, param(l0+"dense/kernel/ConcatPartitions/concat", 256, 512),
		param(l0+"dense/bias/ConcatPartitions/concat", 512))
	att := attention(g, ln, bias, 256,
		g.floats("l0_qkv", []int{256, 768}, get(v0+"MultiheadAttention/qkv_transform_single/kernel/part_0", 1, 1, 256, 768)),
		param(l0+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 768),
		g.floats("l0_out", []int{256, 512}, get(v0+"MultiheadAttention/output_transform_single/kernel/part_0", 1, 1, 256, 512)),
		param(l0+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", 512))
	x = g.op("Add", []string{att, residual})
	x = ffn(g, x, 0, param)

	// Layer 1, width 512.
	l1 := prefixApply + "Layer_1/TransformerLayer/"
	v1 := prefixVar + "Layer_1/TransformerLayer/"
	ln = layerNorm(g, x, param(l1+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", 512),
		param(l1+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", 512))
	att = attention(g, ln, bias, 512,
		g.floats("l1_qkv", []int{512, 1536}, get(v1+"MultiheadAttention/qkv_transform_single/kernel/part_0", 1, 1, 512, 1536)),
		param(l1+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 1536),
		g.floats("l1_out", []int{512, 512}, get(v1+"MultiheadAttention/output_transform_single/kernel/part_0", 1, 1, 512, 512)),
		param(l1+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", 512))
	x = g.op("Add", []string{att, x})
	x = ffn(g, x, 1, param)

	// Mean over the valid positions (an empty text divides a zero sum by 1).
	axis1 := g.ints("axis_1", []int{1}, 1)
	axis2 := g.ints("axis_2", []int{1}, 2)
	masked := g.op("Mul", []string{x, g.op("Unsqueeze", []string{"mask", axis2})})
	sum := g.op("ReduceSum", []string{masked, axis1}, intAttr("keepdims", 0))
	count := g.op("Max", []string{g.op("ReduceSum", []string{"mask", axis1}, intAttr("keepdims", 1)), one})
	pooled := g.op("Div", []string{sum, count})

	// tanh layer, then L2 normalisation.
	t := g.op("Tanh", []string{dense(g, pooled, param(wTanhWeights, 512, 512), param(wTanhBias, 512))})
	sq := g.op("ReduceSum", []string{g.op("Mul", []string{t, t}), axis1}, intAttr("keepdims", 1))
	floor := g.floats("norm_floor", nil, []float32{1e-12})
	norm := g.op("Sqrt", []string{g.op("Max", []string{sq, floor})})
	g.node("Div", []string{t, norm}, []string{"embedding"})

	if firstErr != nil {
		return nil, firstErr
	}
	return g.model("use_lite"), nil
}

func layerNorm(g *onnxGraph, x, scale, bias string) string {
	return g.op("LayerNormalization", []string{x, scale, bias},
		intAttr("axis", -1), floatAttr("epsilon", layerNormEpsilon))
}

func dense(g *onnxGraph, x, kernel, bias string) string {
	return g.op("Add", []string{g.op("MatMul", []string{x, kernel}), bias})
}

// attention is multi-head self-attention with a fused qkv projection.
func attention(g *onnxGraph, x, bias string, width int, qkvW, qkvB, outW, outB string) string {
	headDim := width / heads
	qkv := dense(g, x, qkvW, qkvB)
	split := g.ints(fmt.Sprintf("split_%d", width), []int{3}, int64(width), int64(width), int64(width))
	parts := g.opN("Split", []string{qkv, split}, 3, intAttr("axis", 2))
	shape := g.ints(fmt.Sprintf("heads_shape_%d", width), []int{4}, 0, 0, heads, int64(headDim))
	q := g.op("Transpose", []string{g.op("Reshape", []string{parts[0], shape})}, intsAttr("perm", 0, 2, 1, 3))
	k := g.op("Transpose", []string{g.op("Reshape", []string{parts[1], shape})}, intsAttr("perm", 0, 2, 3, 1))
	v := g.op("Transpose", []string{g.op("Reshape", []string{parts[2], shape})}, intsAttr("perm", 0, 2, 1, 3))
	scale := g.floats(fmt.Sprintf("q_scale_%d", width), nil, []float32{float32(1 / math.Sqrt(float64(headDim)))})
	scores := g.op("Add", []string{g.op("MatMul", []string{g.op("Mul", []string{q, scale}), k}), bias})
	probs := g.op("Softmax", []string{scores}, intAttr("axis", -1))
	ctx := g.op("Transpose", []string{g.op("MatMul", []string{probs, v})}, intsAttr("perm", 0, 2, 1, 3))
	merged := g.op("Reshape", []string{ctx, g.ints(fmt.Sprintf("merge_shape_%d", width), []int{3}, 0, 0, int64(width))})
	return dense(g, merged, outW, outB)
}

// ffn is the pre-norm feed-forward block (512 → 1536 → 512) with its residual.
func ffn(g *onnxGraph, x string, layer int, param func(string, ...int) string) string {
	a := fmt.Sprintf("%sLayer_%d/TransformerLayer/FFN/", prefixApply, layer)
	s := fmt.Sprintf("%sLayer_%d/TransformerLayer/FFN/", prefixStack, layer)
	ln := layerNorm(g, x, param(a+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", 512),
		param(a+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", 512))
	h := g.op("Relu", []string{dense(g, ln, param(s+"conv1/Tensordot/Reshape_1", 512, 1536),
		param(a+"conv1/bias/ConcatPartitions/concat", 1536))})
	f := dense(g, h, param(s+"conv2/Tensordot/Reshape_1", 1536, 512), param(a+"conv2/bias/ConcatPartitions/concat", 512))
	return g.op("Add", []string{x, f})
}

// timingSignal is the transformer's sinusoidal position signal for positions
// 0..127: sin(p·s) for the 128 scales, then cos(p·s).
func timingSignal(scales []float32) []float32 {
	out := make([]float32, maxPieces*256)
	for p := 0; p < maxPieces; p++ {
		for i, s := range scales {
			arg := float64(float32(p) * s)
			out[p*256+i] = float32(math.Sin(arg))
			out[p*256+128+i] = float32(math.Cos(arg))
		}
	}
	return out
}
