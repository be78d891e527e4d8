#!/usr/bin/env python3
"""Write reference.json: what Hugging Face tokenizers and ONNX Runtime make of
a fixed set of sentences, for each sentence-transformers export under
var/models, with sentence-transformers' pooling done in numpy.

Offline reference tooling for parity_test.go; neither the tests nor the
product run it. Needs the PyPI packages tokenizers, onnxruntime and numpy:

    python3 -m venv /tmp/refenv && . /tmp/refenv/bin/activate
    pip install tokenizers onnxruntime numpy
    python3 embed/bert/testdata/make_reference.py [MODELS_DIR]

MODELS_DIR defaults to the repository's var/models. A model whose folder is
absent is left out of the file.
"""

import hashlib
import json
import os
import platform
import sys

import numpy as np
import onnxruntime
import tokenizers

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODELS = os.path.join(HERE, "..", "..", "..", "var", "models")

BGE_QUERY = "Represent this sentence for searching relevant passages: "

# Must match Known in bert.go: pooling, truncation length, prefixes.
SPECS = {
    "all-minilm-l6-v2": ("mean", 256, "", ""),
    "all-minilm-l6-v2-q": ("mean", 256, "", ""),
    "e5-small-v2": ("mean", 512, "query: ", "passage: "),
    "e5-small-v2-q": ("mean", 512, "query: ", "passage: "),
    "bge-small-en-v1.5": ("cls", 512, BGE_QUERY, ""),
    "bge-small-en-v1.5-q": ("cls", 512, BGE_QUERY, ""),
}


def long_text():
    """About 900 tokens of contract-like prose, so every model truncates."""
    parts = []
    for i in range(1, 41):
        parts.append(
            f"Clause {i}. The supplier shall deliver the goods listed in "
            f"schedule {i % 7 + 1} within {i * 3} days of the purchase order, "
            "and the buyer may inspect them before accepting delivery."
        )
    return " ".join(parts)


SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "How many unused leave days can be carried over to next year?",
    "Café society: a naïve reading of Ångström's résumé, déjà vu.",
    "İstanbul, STRASSE und Straße, ÉCOLE, Œuvre, ǅemal.",
    "東京は日本の首都です。北京是中国的首都，人口约两千万。",
    'Wait... what?!?! (really) -- yes: [ok] {fine} <tag> #1 @home ~50% $5 ^_^ "quoted" «guillemets» — dash…',
    "Great job 🎉 everyone 👍🏽, see you tomorrow 🙂",
    "See https://example.com/docs/v2/index.html?q=leave&lang=en#top: revenue of EUR 7.2 million, up 3.14% (2,500,000 units).",
    "",
    "Column A\tColumn B\nsecond line\r\n\tindented line\u2028after a line separator",
    "Control\u0000chars\u200band\ufffdreplacement, soft\u00adhyphen and\u00a0no-break space.",
    "Literal special tokens: [MASK] and [SEP] stay tokens, [mask] does not.",
    long_text(),
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_tokenizer(folder, max_tokens):
    tok = tokenizers.Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    tok.enable_truncation(max_length=max_tokens)
    return tok


def embed(session, tok, text, pooling):
    """One text alone (no padding): pooled as sentence-transformers does
    (attention-masked mean, or the [CLS] token), then L2-normalised."""
    enc = tok.encode(text)
    ids = np.array([enc.ids], dtype=np.int64)
    mask = np.array([enc.attention_mask], dtype=np.int64)
    types = np.array([enc.type_ids], dtype=np.int64)
    (hidden,) = session.run(
        ["last_hidden_state"],
        {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
    )
    if pooling == "cls":
        vec = hidden[0, 0, :]
    else:
        m = mask[0].astype(hidden.dtype)[:, None]
        vec = (hidden[0] * m).sum(axis=0) / max(m.sum(), 1e-9)
    vec = vec / max(np.linalg.norm(vec), 1e-12)
    return [float(f"{x:.7g}") for x in vec]


def reference(folder, spec):
    pooling, max_tokens, query_prefix, passage_prefix = spec
    tok = load_tokenizer(folder, max_tokens)
    session = onnxruntime.InferenceSession(
        os.path.join(folder, "model.onnx"), providers=["CPUExecutionProvider"]
    )
    out = {
        "model_sha256": sha256(os.path.join(folder, "model.onnx")),
        "tokenizer_sha256": sha256(os.path.join(folder, "tokenizer.json")),
        "ids": [], "query_ids": [], "passage_ids": [], "query": [], "passage": [],
    }
    for s in SENTENCES:
        out["ids"].append(tok.encode(s).ids)
        out["query_ids"].append(tok.encode(query_prefix + s).ids)
        out["passage_ids"].append(tok.encode(passage_prefix + s).ids)
        out["query"].append(embed(session, tok, query_prefix + s, pooling))
        out["passage"].append(embed(session, tok, passage_prefix + s, pooling))
    return out


def main():
    models_dir = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_MODELS
    versions = {
        "python": platform.python_version(),
        "tokenizers": tokenizers.__version__,
        "onnxruntime": onnxruntime.__version__,
        "numpy": np.__version__,
    }
    print("versions:", ", ".join(f"{k} {v}" for k, v in versions.items()))
    doc = {"versions": versions, "sentences": SENTENCES, "models": {}}
    for name, spec in SPECS.items():
        folder = os.path.join(models_dir, name)
        if not os.path.exists(os.path.join(folder, "model.onnx")):
            print(f"{name}: absent, skipped")
            continue
        doc["models"][name] = reference(folder, spec)
        print(f"{name}: done")
    path = os.path.join(HERE, "reference.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
