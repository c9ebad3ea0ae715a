"""The peer: JoeyNMT 2.3.0 in its own virtual environment, configured like configs/bench_m30k.yaml.

Its recurrent decoder with Bahdanau attention, input feeding and a bridge; the same data, the
same joint SentencePiece model and vocabulary, the same sizes, dropout, Adam 1e-3 at a
constant rate (``scheduling: exponential`` with ``decrease_factor: 1.0``: its ``plateau``
scheduler passes an argument torch 2.13 removed), batches of 80 sentences, max length 50.
"""
from __future__ import annotations

import re
from pathlib import Path

JOEY_VERSION = "2.3.0"


def write_vocab(pieces: list[str], path: Path) -> None:
    """JoeyNMT puts its own specials first (<unk> 0, <pad> 1, <s> 2, </s> 3); the file lists
    the remaining pieces of the shared SentencePiece model."""
    path.write_text("".join(p + "\n" for p in pieces[4:]), encoding="utf-8")


def _side(lang: str, spm: Path, vocab: Path) -> dict:
    return {"lang": lang, "level": "bpe", "lowercase": False, "normalize": False, "max_length": 50,
            "min_length": 1, "voc_file": str(vocab), "tokenizer_type": "sentencepiece",
            "tokenizer_cfg": {"model_file": str(spm), "pretokenizer": "none"}}


def config(data_dir: Path, spm: Path, vocab: Path, model_dir: Path, beam: int = 5,
           validation_freq: int = 50, test_only: bool = False, checkpoint: Path | None = None) -> dict:
    data = {"train": str(data_dir / "train"), "dev": str(data_dir / "val"),
            "test": str(data_dir / "test_2016_flickr"), "dataset_type": "plain",
            "sample_dev_subset": 100, "src": _side("en", spm, vocab), "trg": _side("fr", spm, vocab)}
    if test_only:  # decode the test set only
        del data["dev"], data["train"]
    rnn = {"type": "recurrent", "rnn_type": "gru", "embeddings": {"embedding_dim": 256}, "hidden_size": 512}
    return {
        "name": "bench_joeynmt", "joeynmt_version": JOEY_VERSION,
        "data": data,
        "testing": {"n_best": 1, "beam_size": beam, "beam_alpha": 0.0, "batch_size": 64,
                    "batch_type": "sentence", "max_output_length": -1, "eval_metrics": ["bleu"],
                    "sacrebleu_cfg": {"tokenize": "13a"},
                    **({"load_model": str(checkpoint)} if checkpoint else {})},
        "training": {"random_seed": 42, "optimizer": "adam", "adam_betas": [0.9, 0.999],
                     "learning_rate": 0.001, "learning_rate_min": 1.0e-8, "clip_grad_norm": 1.0,
                     "loss": "crossentropy", "label_smoothing": 0.0, "batch_size": 80,
                     "batch_type": "sentence", "normalization": "tokens", "scheduling": "exponential",
                     "decrease_factor": 1.0, "epochs": 1000, "validation_freq": validation_freq,
                     "logging_freq": 10, "early_stopping_metric": "bleu", "model_dir": str(model_dir),
                     "overwrite": True, "shuffle": True, "use_cuda": False, "fp16": False,
                     "print_valid_sents": [], "keep_best_ckpts": 1},
        "model": {"initializer": "xavier_uniform", "bias_initializer": "zeros", "init_rnn_orthogonal": True,
                  "embed_initializer": "normal", "embed_init_weight": 0.1, "tied_embeddings": False,
                  "encoder": {**rnn, "bidirectional": True, "dropout": 0.2, "num_layers": 1},
                  "decoder": {**rnn, "dropout": 0.2, "hidden_dropout": 0.2, "num_layers": 1,
                              "input_feeding": True, "init_hidden": "bridge", "attention": "bahdanau"}},
    }


TRAIN_LINE = re.compile(r"Epoch\s+(\d+), Step:\s+(\d+), Batch Loss:\s+([\d.]+), Batch Acc: [\d.]+, "
                        r"Tokens per Sec:\s+(\d+)")


def training_log(text: str) -> list[dict]:
    """(epoch, step, loss, tok/s) of each logging line of JoeyNMT's train.log."""
    return [{"epoch": int(m[1]), "step": int(m[2]), "loss": float(m[3]), "tok_per_s": int(m[4])}
            for m in TRAIN_LINE.finditer(text)]


def parameters(text: str) -> int | None:
    m = re.search(r"Total params: (\d+)", text)
    return int(m[1]) if m else None


def generation_seconds(text: str) -> float:
    found = re.findall(r"Generation took ([\d.]+)\[sec\]", text)
    if not found:
        raise RuntimeError("JoeyNMT's log has no 'Generation took' line")
    return float(found[-1])
