#!/usr/bin/env python3
"""The reference vectors that sens-engine's tests of its encoders' forward passes
compare to: the same models in numpy, from the files scripts/setup.sh installs.

    scripts/model_reference.py .tools/minilm > sens-engine/tests/fixtures/minilm-reference.json
    scripts/model_reference.py .tools/mpnet > sens-engine/tests/fixtures/mpnet-reference.json

all-MiniLM-L6-v2 is a BERT; all-mpnet-base-v2 an MPNet (positions from 2, no
token types, <s> and </s>, a relative-position bias in every layer, layer norms'
epsilon 1e-5), told apart by their tensors. Needs numpy only; the safetensors
file is read by hand. The sentences are ASCII, so the uncased split is lower
case and punctuation apart.
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
    # Past 32 word pieces: MPNet's logarithmic position buckets.
    "Split a long text into lines of at most a given width, breaking at spaces where it can and inside words only when a single word is longer than the whole line allows.",
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


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def relative_bias(p, n):
    # MPNet's (T5's) buckets: 16 per direction, exact below 8, logarithmic to 128.
    rel = np.arange(n)[None, :] - np.arange(n)[:, None]  # key minus query
    side = (rel > 0) * 16
    a = np.abs(rel)
    large = 8 + (np.log(np.maximum(a, 1).astype(np.float32) / np.float32(8)) / np.float32(np.log(16.0)) * np.float32(8)).astype(np.int64)
    bucket = side + np.where(a < 8, a, np.minimum(large, 15))
    return p["encoder.relative_attention_bias.weight"][bucket].transpose(2, 0, 1)  # heads x n x n


def gelu(x):
    # The exact GELU with erf from Abramowitz-Stegun 7.1.26 (numpy has no erf).
    z = x / np.sqrt(2.0)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return 0.5 * x * (1.0 + np.sign(z) * (1.0 - poly * np.exp(-a * a)))


def encode(p, ids, heads=12):
    n = len(ids)
    mpnet = "encoder.relative_attention_bias.weight" in p
    eps = 1e-5 if mpnet else 1e-12
    first = 2 if mpnet else 0
    x = p["embeddings.word_embeddings.weight"][ids] + p["embeddings.position_embeddings.weight"][first : first + n]
    if not mpnet:
        x = x + p["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, p["embeddings.LayerNorm.weight"], p["embeddings.LayerNorm.bias"], eps)
    bias = relative_bias(p, n) if mpnet else 0.0
    names = (
        ["attention.attn.q", "attention.attn.k", "attention.attn.v", "attention.attn.o", "attention.LayerNorm"]
        if mpnet
        else ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense", "attention.output.LayerNorm"]
    )
    d = x.shape[-1]
    hd = d // heads
    layer = 0
    while f"encoder.layer.{layer}.output.dense.weight" in p:
        q = f"encoder.layer.{layer}."

        def dense(h, name):
            return h @ p[q + name + ".weight"].T + p[q + name + ".bias"]

        def split(h):
            return h.reshape(n, heads, hd).transpose(1, 0, 2)

        query, key, value, out, norm = names
        att = split(dense(x, query)) @ split(dense(x, key)).transpose(0, 2, 1) / np.sqrt(hd) + bias
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        ctx = (att @ split(dense(x, value))).transpose(1, 0, 2).reshape(n, d)
        x = layer_norm(dense(ctx, out) + x, p[q + norm + ".weight"], p[q + norm + ".bias"], eps)
        h = gelu(dense(x, "intermediate.dense"))
        x = layer_norm(dense(h, "output.dense") + x, p[q + "output.LayerNorm.weight"], p[q + "output.LayerNorm.bias"], eps)
        layer += 1
    v = x.mean(0)
    return v / np.linalg.norm(v)


def wordpiece(text, vocab):
    first, last = ("<s>", "</s>") if "<s>" in vocab else ("[CLS]", "[SEP]")
    ids = [vocab[first]]
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
    return ids + [vocab[last]]


def main():
    p, vocab = load(sys.argv[1])
    out = [{"text": s, "ids": wordpiece(s, vocab), "vector": [round(float(v), 7) for v in encode(p, wordpiece(s, vocab))]} for s in SENTENCES]
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
