#!/usr/bin/env python3
"""Write tiny-cross-encoder/: a tiny BERT-shaped sequence-classification
graph (model.onnx), its vocab.txt, and reference.json with the token ids and
logits that Hugging Face tokenizers and ONNX Runtime give for a few query and
passage pairs.

No real cross-encoder weights are available to the tests, so cross_test.go
runs this one. The graph has a cross-encoder's interface (int64 input_ids,
attention_mask, token_type_ids [batch, seq]; float logits [batch, 1]) and is

    h      = tanh((E[input_ids] + T[token_type_ids]) W + b)
    pooled = sum(h * mask) / sum(mask)          (over the sequence)
    logits = pooled v + c

with fixed random weights from a seed. The token type embedding T makes the
output depend on token_type_ids, so a test can tell that they reach the
graph; the masked mean makes it independent of padding.

Offline tooling; neither the tests nor the product run it. Needs the PyPI
packages onnx, onnxruntime, tokenizers and numpy:

    . /tmp/refenv/bin/activate && pip install onnx onnxruntime tokenizers numpy
    python3 embed/bert/testdata/make_tiny_crossencoder.py
"""

import json
import os
import platform
import string

import numpy as np
import onnx
import onnxruntime
import tokenizers
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tiny-cross-encoder")
HIDDEN = 16
MAX_TOKENS = 24  # small, so that several pairs are truncated longest-first
SEED = 20240611

WORDS = """the a an of to in on for and or is are be can how many what when
who which unused leave day days year next over carried carry may must shall
employee employees manager approve approval request policy holiday holidays
annual sick pay paid contract supplier buyer deliver delivery goods invoice
terminate notice cafe naive report within business""".split()
SUFFIXES = ["s", "ed", "ing", "ly", "er", "ion"]


def vocab():
    """Special tokens, whole words, then single characters, so that any
    lowercase ASCII word has pieces."""
    toks = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    toks += WORDS
    toks += ["##" + s for s in SUFFIXES]
    toks += list(string.ascii_lowercase) + ["##" + c for c in string.ascii_lowercase]
    toks += list(string.digits) + ["##" + c for c in string.digits]
    toks += list(string.punctuation)
    seen, out = set(), []
    for t in toks:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def graph(vocab_size):
    rng = np.random.default_rng(SEED)
    init = lambda name, shape, scale: numpy_helper.from_array(
        (rng.standard_normal(shape) * scale).astype(np.float32), name
    )
    inits = [
        init("E", (vocab_size, HIDDEN), 0.5),
        init("T", (2, HIDDEN), 1.0),
        init("W", (HIDDEN, HIDDEN), 0.4),
        init("b", (HIDDEN,), 0.1),
        init("v", (HIDDEN, 1), 0.8),
        init("c", (1,), 0.1),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
    ]
    nodes = [
        helper.make_node("Gather", ["E", "input_ids"], ["emb"]),
        helper.make_node("Gather", ["T", "token_type_ids"], ["typ"]),
        helper.make_node("Add", ["emb", "typ"], ["x"]),
        helper.make_node("MatMul", ["x", "W"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["xwb"]),
        helper.make_node("Tanh", ["xwb"], ["h"]),
        helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", "axis2"], ["mask3"]),
        helper.make_node("Mul", ["h", "mask3"], ["hm"]),
        helper.make_node("ReduceSum", ["hm", "axis1"], ["sum"], keepdims=0),
        helper.make_node("ReduceSum", ["maskf", "axis1"], ["count"], keepdims=1),
        helper.make_node("Div", ["sum", "count"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "v"], ["pv"]),
        helper.make_node("Add", ["pv", "c"], ["logits"]),
    ]
    ins = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])]
    g = helper.make_graph(nodes, "tiny_cross_encoder", ins, outs, inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


QUERY = "How many unused leave days can be carried over?"
PASSAGES = [
    "Employees may carry over up to five unused annual leave days to the next year.",
    "The supplier shall deliver the goods within ten business days.",
    "Sick leave is paid.",
    "",
    "Café holidays, naïve approvals: the manager must approve every request [SEP] in writing!",
    "Leave",
    "The buyer may terminate the contract on thirty days notice if the supplier fails to deliver the goods or the invoice is wrong.",
]
SHORT_QUERY = "leave"
# Longer than half of MAX_TOKENS, so both sides of a long pair are cut.
LONG_QUERY = "What notice must the buyer give to terminate the contract when the supplier fails to deliver the goods?"


def main():
    os.makedirs(OUT, exist_ok=True)
    toks = vocab()
    with open(os.path.join(OUT, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(toks) + "\n")
    model = graph(len(toks))
    onnx.save(model, os.path.join(OUT, "model.onnx"))

    tok = tokenizers.BertWordPieceTokenizer(os.path.join(OUT, "vocab.txt"), lowercase=True)
    tok.enable_truncation(max_length=MAX_TOKENS)
    session = onnxruntime.InferenceSession(
        os.path.join(OUT, "model.onnx"), providers=["CPUExecutionProvider"]
    )
    cases = []
    for query in (QUERY, SHORT_QUERY, LONG_QUERY):
        for p in PASSAGES:
            enc = tok.encode(query, p)
            feed = {
                "input_ids": np.array([enc.ids], dtype=np.int64),
                "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
            }
            (logits,) = session.run(["logits"], feed)
            feed["token_type_ids"] = np.zeros_like(feed["token_type_ids"])
            (untyped,) = session.run(["logits"], feed)
            cases.append({
                "query": query, "passage": p, "ids": enc.ids, "type_ids": enc.type_ids,
                "logit": float(logits[0, 0]), "logit_types_zero": float(untyped[0, 0]),
            })
    versions = {
        "python": platform.python_version(), "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__, "tokenizers": tokenizers.__version__,
        "numpy": np.__version__,
    }
    print("versions:", ", ".join(f"{k} {v}" for k, v in versions.items()))
    with open(os.path.join(OUT, "reference.json"), "w", encoding="utf-8") as f:
        json.dump({"versions": versions, "max_tokens": MAX_TOKENS, "cases": cases},
                  f, ensure_ascii=False, indent=1)
        f.write("\n")
    for name in ("model.onnx", "vocab.txt", "reference.json"):
        print(name, os.path.getsize(os.path.join(OUT, name)), "bytes")


if __name__ == "__main__":
    main()
