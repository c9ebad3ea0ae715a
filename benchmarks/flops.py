"""Analytic FLOPs per target token (a multiply-add = 2 FLOPs; training = 3 x forward).

Matrix products only: the element-wise work (gates, tanh, softmax) is a few percent and is
left out on both sides. ``src_per_tgt`` is the ratio of source to target tokens in the
training data, so that the encoder's per-source-token cost is charged per target token;
``src_len`` is the mean source length (attention reads every source position per step).
"""
from __future__ import annotations


def gru(inputs: int, hidden: int) -> int:
    """One GRU step: 3 gates x (input + recurrent) products."""
    return 2 * 3 * hidden * (inputs + hidden)


def rnnsearch(emb: int, enc: int, dec: int, att: int, maxout: int, vocab: int, src_len: float,
              src_per_tgt: float) -> dict:
    ctx = 2 * enc
    per_src = 2 * gru(emb, enc) + 2 * ctx * att  # both directions, U_a h_j
    per_tgt = (gru(emb, dec) + 2 * 3 * dec * ctx    # W E y, U s, [U_z; U_r] s, C c_i
               + 2 * dec * att                      # W_a s_{i-1}
               + src_len * (2 * att + 2 * ctx)      # v_a^T (.) and sum_j alpha_ij h_j
               + 2 * 2 * maxout * (dec + emb + ctx)  # U_o s, V_o E y, C_o c
               + 2 * maxout * vocab)                # W_o t
    forward = per_tgt + src_per_tgt * per_src
    return {"forward": forward, "train": 3 * forward}


def joeynmt_rnn(emb: int, enc: int, dec: int, vocab: int, src_len: float, src_per_tgt: float) -> dict:
    """JoeyNMT's recurrent model: bidirectional GRU encoder, Bahdanau (MLP) attention with
    attention size = decoder size, input feeding (the previous attentional vector enters the
    GRU), an attentional layer tanh(W [s; c]) and the output layer."""
    ctx, att = 2 * enc, dec
    per_src = 2 * gru(emb, enc) + 2 * ctx * att     # key projection
    per_tgt = (gru(emb + dec, dec)                   # GRU over [E y; attentional vector]
               + 2 * dec * att                       # query projection
               + src_len * (2 * att + 2 * ctx)       # energy and context
               + 2 * dec * (ctx + dec)               # attentional vector
               + 2 * dec * vocab)                    # output layer
    forward = per_tgt + src_per_tgt * per_src
    return {"forward": forward, "train": 3 * forward}
