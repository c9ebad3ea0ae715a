"""The second peer: OpenNMT-py 3.5.1 in its own virtual environment, configured like
configs/bench_m30k.yaml.

Its RNN model (``encoder_type: brnn``, ``decoder_type: rnn``, GRU): a bidirectional GRU encoder,
MLP (Bahdanau) attention, input feeding and a bridge, as JoeyNMT's; embeddings 256, decoder 512,
dropout 0.2, Adam 1e-3, gradient clipping at 1, batches of 80 sentences, at most 50 pieces a
side, Glorot initialisation. One size differs: OpenNMT-py's attention needs the annotations as
wide as the decoder state, so its encoder has 256 units per direction (``enc_hid_size`` counts
both), where rnnsearch's and JoeyNMT's have 512; the decoder, where most of the products are
(the 8000-piece output layer among them), has the same 512. The table gives each model's
parameters and analytic FLOPs per token.

OpenNMT-py 3.5.1 pins torch < 2.3; ``make onmt`` installs it without its dependencies beside
the same torch 2.13.0 as rnnsearch and JoeyNMT (the CPU wheel), then the dependencies it imports.
It reads the shared SentencePiece model's pieces as pre-tokenised text (``prepare``), and its
outputs are turned back into text with that model.
"""
from __future__ import annotations

import re
from pathlib import Path

ONMT_VERSION = "3.5.1"
SPLITS = ("train", "val", "test_2016_flickr")


def prepare(data_dir: Path, spm_model: Path, pieces: list[str], work: Path, limit: int = 0) -> Path:
    """Multi30k as space-separated SentencePiece pieces (OpenNMT-py splits on spaces) and a
    vocabulary file of the model's pieces (OpenNMT-py adds its own specials); the test set cut
    to its first ``limit`` lines when ``limit``. Returns the folder."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(spm_model))
    out = work / "onmt_data"
    out.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        for lang in ("en", "fr"):
            lines = (data_dir / f"{split}.{lang}").read_text(encoding="utf-8").splitlines()
            if split == "test_2016_flickr" and limit:
                lines = lines[:limit]
            text = "".join(" ".join(sp.encode(line, out_type=str)) + "\n" for line in lines)
            (out / f"{split}.{lang}").write_text(text, encoding="utf-8")
    # pieces 0-3 are SentencePiece's <pad> <unk> <s> </s>; OpenNMT-py has its own
    (out / "vocab.txt").write_text("".join(f"{p}\t1\n" for p in pieces[4:]), encoding="utf-8")
    return out


def config(data: Path, model_dir: Path, save_every: int = 50) -> dict:
    """The training config; it saves a checkpoint every ``save_every`` updates (the bench stops
    it with SIGINT, as JoeyNMT)."""
    return {
        "save_data": str(model_dir / "data"), "src_vocab": str(data / "vocab.txt"),
        "tgt_vocab": str(data / "vocab.txt"), "share_vocab": True,
        "data": {"corpus_1": {"path_src": str(data / "train.en"), "path_tgt": str(data / "train.fr"),
                              "transforms": ["filtertoolong"]},
                 "valid": {"path_src": str(data / "val.en"), "path_tgt": str(data / "val.fr")}},
        "src_seq_length": 50, "tgt_seq_length": 50,
        "save_model": str(model_dir / "model"), "save_checkpoint_steps": save_every, "keep_checkpoint": 1,
        "seed": 42, "train_steps": 10_000_000, "valid_steps": 10_000_000,
        "report_every": 10,
        "model_type": "text", "encoder_type": "brnn", "decoder_type": "rnn", "rnn_type": "GRU",
        "enc_layers": 1, "dec_layers": 1, "word_vec_size": 256, "enc_hid_size": 512, "dec_hid_size": 512,
        "global_attention": "mlp", "input_feed": 1, "bridge": True,
        "dropout": [0.2], "attention_dropout": [0.0],
        "optim": "adam", "learning_rate": 0.001, "adam_beta1": 0.9, "adam_beta2": 0.999, "max_grad_norm": 1.0,
        "batch_size": 80, "batch_type": "sents", "normalization": "tokens",
        "param_init": 0.0, "param_init_glorot": True, "world_size": 1, "gpu_ranks": [], "num_workers": 0,
    }


STEP_LINE = re.compile(r"Step\s+(\d+)/\s*\d+; acc:\s*[\d.]+; ppl:\s*[\d.]+; xent:\s*([\d.]+);.*?"
                       r"([\d.]+)/\s*([\d.]+) tok/s;\s+([\d.]+) sec")


def training_log(text: str) -> list[dict]:
    """(step, loss, target tok/s, seconds) of each report line of OpenNMT-py's log (every 10
    updates; its tok/s are those of the updates since the previous line)."""
    return [{"step": int(m[1]), "loss": float(m[2]), "tok_per_s": float(m[4]), "elapsed_s": float(m[5])}
            for m in STEP_LINE.finditer(text)]


def parameters(text: str) -> int | None:
    m = re.search(r"number of parameters: (\d+)", text)
    return int(m[1]) if m else None


def last_checkpoint(model_dir: Path) -> Path:
    """The checkpoint of the most updates (``model_step_N.pt``)."""
    found = sorted(model_dir.glob("model_step_*.pt"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    if not found:
        raise RuntimeError(f"OpenNMT-py saved no checkpoint in {model_dir}")
    return found[-1]


def translation_seconds(text: str) -> float:
    found = re.findall(r"Total translation time \(s\): ([\d.]+)", text)
    if not found:
        raise RuntimeError("OpenNMT-py's log has no 'Total translation time' line")
    return float(found[-1])


def detokenize(piece_lines: list[str], spm_model: Path) -> list[str]:
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(spm_model))
    return [sp.decode(line.split()) for line in piece_lines]
