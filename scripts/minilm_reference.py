#!/usr/bin/env python3
"""The reference vectors that sens-engine's test of its all-MiniLM-L6-v2 forward
pass compares to (sens-engine/tests/fixtures/minilm-reference.json): the same
model in numpy, from the files scripts/setup.sh installs.

    scripts/minilm_reference.py [MODEL_DIR] > sens-engine/tests/fixtures/minilm-reference.json

MODEL_DIR defaults to .tools/minilm. Needs numpy only; the safetensors file is
read by hand. The sentences are ASCII, so BERT's uncased split is lower case and
punctuation apart.
"""

import json
import os
import struct
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the thread count)

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "chunked. Break *iterable* into lists of length *n*.",
]


def load(folder):
    raw = open(os.path.join(folder, "model.safetensors"), "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    p = {}
    for name, t in header.items():
        if name != "__metadata__" and t["dtype"] == "F32":
            start, end = t["data_offsets"]
            p[name] = np.frombuffer(raw, np.float32, (end - start) // 4, 8 + n + start).reshape(t["shape"])
    vocab = json.load(open(os.path.join(folder, "tokenizer.json")))["model"]["vocab"]
    return p, vocab


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w + b


def gelu(x):
    # The exact GELU with erf from Abramowitz-Stegun 7.1.26 (numpy has no erf).
    z = x / np.sqrt(2.0)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return 0.5 * x * (1.0 + np.sign(z) * (1.0 - poly * np.exp(-a * a)))


def encode(p, ids, heads=12):
    n = len(ids)
    x = p["embeddings.word_embeddings.weight"][ids] + p["embeddings.position_embeddings.weight"][:n]
    x = layer_norm(x + p["embeddings.token_type_embeddings.weight"][0], p["embeddings.LayerNorm.weight"], p["embeddings.LayerNorm.bias"])
    d = x.shape[-1]
    hd = d // heads
    layer = 0
    while f"encoder.layer.{layer}.output.dense.weight" in p:
        q = f"encoder.layer.{layer}."

        def dense(h, name):
            return h @ p[q + name + ".weight"].T + p[q + name + ".bias"]

        def split(h):
            return h.reshape(n, heads, hd).transpose(1, 0, 2)

        att = split(dense(x, "attention.self.query")) @ split(dense(x, "attention.self.key")).transpose(0, 2, 1) / np.sqrt(hd)
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        ctx = (att @ split(dense(x, "attention.self.value"))).transpose(1, 0, 2).reshape(n, d)
        x = layer_norm(dense(ctx, "attention.output.dense") + x, p[q + "attention.output.LayerNorm.weight"], p[q + "attention.output.LayerNorm.bias"])
        h = gelu(dense(x, "intermediate.dense"))
        x = layer_norm(dense(h, "output.dense") + x, p[q + "output.LayerNorm.weight"], p[q + "output.LayerNorm.bias"])
        layer += 1
    v = x.mean(0)
    return v / np.linalg.norm(v)


def wordpiece(text, vocab):
    ids = [vocab["[CLS]"]]
    for word in "".join(c if c.isalnum() else f" {c} " for c in text.lower()).split():
        start = 0
        while start < len(word):
            end = len(word)
            while end > start and (("##" if start else "") + word[start:end]) not in vocab:
                end -= 1
            if end == start:
                ids.append(vocab["[UNK]"])
                break
            ids.append(vocab[("##" if start else "") + word[start:end]])
            start = end
    return ids + [vocab["[SEP]"]]


def main():
    p, vocab = load(sys.argv[1] if len(sys.argv) > 1 else ".tools/minilm")
    out = [{"text": s, "ids": wordpiece(s, vocab), "vector": [round(float(v), 7) for v in encode(p, wordpiece(s, vocab))]} for s in SENTENCES]
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
