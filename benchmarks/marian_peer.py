"""The peer of ``make bench-marian``: Marian (the ``pymarian`` wheel, CPU build with MKL) in its own
virtual environment, its RNN model (``--type s2s``) configured like rnnsearch's side of the race.

Marian's s2s model is Nematus's: a bidirectional GRU encoder, and a conditional GRU decoder (two GRU
transitions per target word, the attention between them), a deep output tanh(W [s; E y; c]) of the
embedding size and the output layer. Its words/s is the target labels of its updates.
"""
from __future__ import annotations

import re

import flops

MARIAN_VERSION = "1.12.42"


def train_args(model, vocabs, train, emb: int, rnn: int, vocab: int, batch: int, pool: int, max_len: int,
               threads: int, lr: float, log) -> list[str]:
    """``pymarian train``'s arguments: the s2s model at the given sizes, Adam at a constant rate,
    batches of ``batch`` sentences sorted in pools of ``pool`` batches (maxi-batches), synchronous
    updates over ``threads`` CPU workers, no validation (both systems are scored afterwards)."""
    return ["train", "--type", "s2s", "--model", str(model), "--train-sets", *map(str, train),
            "--vocabs", *map(str, vocabs), "--dim-vocabs", str(vocab), str(vocab), "--dim-emb", str(emb),
            "--dim-rnn", str(rnn), "--enc-type", "bidirectional", "--enc-cell", "gru", "--dec-cell", "gru",
            "--enc-depth", "1", "--dec-depth", "1", "--mini-batch", str(batch), "--maxi-batch", str(pool),
            "--max-length", str(max_len), "--optimizer", "adam", "--learn-rate", str(lr), "--clip-norm", "1",
            "--cpu-threads", str(threads), "--sync-sgd", "--disp-freq", "20", "--save-freq", "100000000",
            "--seed", "1", "--log", str(log), "--sigterm", "save-and-exit", "--overwrite",
            "--tempdir", str(model.parent)]


def decode_args(model, vocabs, source, output, beam: int, threads: int, gemm: str = "float32") -> list[str]:
    """``pymarian decode``: batches of 32 sentences, sorted by length in pools of 100 batches."""
    return ["decode", "--models", str(model), "--vocabs", *map(str, vocabs), "--input", str(source),
            "--output", str(output), "--beam-size", str(beam), "--mini-batch", "32", "--maxi-batch", "100",
            "--maxi-batch-sort", "src", "--cpu-threads", str(threads), "--gemm-type", gemm, "--quiet"]


TRAIN_LINE = re.compile(r"Ep\. (\d+) : Up\. (\d+) : Sen\. ([\d,]+) : Cost ([\d.]+) .*?: ([\d.]+) words/s")


def training_log(text: str) -> list[dict]:
    """(epoch, update, cost, target words/s) of each display line of Marian's training log."""
    return [{"epoch": int(m[1]), "step": int(m[2]), "loss": float(m[4]), "tok_per_s": float(m[5])}
            for m in TRAIN_LINE.finditer(text)]


def s2s(emb: int, rnn: int, vocab: int, src_len: float, src_per_tgt: float) -> dict:
    """FLOPs per target word of Marian's s2s model (products only, as flops.py counts them)."""
    ctx, att = 2 * rnn, rnn
    per_src = 2 * flops.gru(emb, rnn) + 2 * ctx * att  # both directions, the keys
    per_tgt = (flops.gru(emb, rnn) + 2 * rnn * att      # the first transition, the query
               + src_len * (2 * att + 2 * ctx)          # energies and the context
               + flops.gru(ctx, rnn)                     # the second transition, over c_i
               + 2 * emb * (rnn + emb + ctx)             # the deep output
               + 2 * emb * vocab)                        # the output layer
    forward = per_tgt + src_per_tgt * per_src
    return {"forward": forward, "train": 3 * forward}
