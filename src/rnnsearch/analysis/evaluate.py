"""Scoring: sacreBLEU on everything, on the "No UNK" subset (the paper's Table 1) and
by source-length bucket (the paper's Figure 2); sacreBLEU's chrF on everything."""
from __future__ import annotations


from sacrebleu.metrics import BLEU, CHRF
from rnnsearch.data.io import DataError

BUCKET_WIDTH = 10
LAST_BUCKET = 60  # sentences longer than this share one bucket


def corpus_bleu(hyps: list[str], refs: list[str]) -> tuple[float, str]:
    """sacreBLEU's corpus BLEU (default 13a tokenisation, exp smoothing) and its signature."""
    metric = BLEU()
    score = metric.corpus_score(hyps, [refs])
    return float(score.score), str(metric.get_signature())


def corpus_chrf(hyps: list[str], refs: list[str]) -> tuple[float, str]:
    """sacreBLEU's corpus chrF (chrF2: character 6-grams, beta 2, no word n-grams) and its signature."""
    metric = CHRF()
    score = metric.corpus_score(hyps, [refs])
    return float(score.score), str(metric.get_signature())


def bucket_of(length: int) -> tuple[int, int]:
    """Source length in words -> (lo, hi) bucket, e.g. 17 -> (11, 20); hi = 0 for the last one."""
    if length > LAST_BUCKET:
        return LAST_BUCKET + 1, 0
    lo = max(0, (length - 1) // BUCKET_WIDTH) * BUCKET_WIDTH + 1
    return lo, lo + BUCKET_WIDTH - 1


def bucket_label(lo: int, hi: int) -> str:
    return f">{lo - 1}" if hi == 0 else f"{lo}-{hi}"


def bleu_by_length(hyps: list[str], refs: list[str], lengths: list[int]) -> list[dict]:
    """BLEU of the sentences in each source-length bucket, with their count; the last bucket (longer than
    LAST_BUCKET) has no upper bound (``hi`` None)."""
    groups: dict[tuple[int, int], list[int]] = {}
    for i, n in enumerate(lengths):
        groups.setdefault(bucket_of(n), []).append(i)
    out = []
    for (lo, hi), idx in sorted(groups.items()):
        score, _ = corpus_bleu([hyps[i] for i in idx], [refs[i] for i in idx])
        out.append({"bucket": bucket_label(lo, hi), "lo": lo, "hi": hi or None, "n": len(idx), "bleu": score})
    return out


def length_unit(codec) -> str:
    """What a source length counts: the tokens of the model's pre-tokenisation (Moses splits
    punctuation and clitics off words, so a sentence has more of them than it has words)."""
    return "Moses tokens" if codec.tokenizer == "moses" else "whitespace-separated words"


def score_translations(hyps: list[str], refs: list[str], srcs: list[str], src_codec, tgt_codec) -> dict:
    """All the numbers ``rnnsearch evaluate`` reports, from finished translations."""
    if not (len(hyps) == len(refs) == len(srcs)):
        raise DataError(f"{len(srcs)} sources, {len(refs)} references, {len(hyps)} translations")
    if not srcs:
        raise DataError("no sentences to score: the test set is empty")
    bleu, signature = corpus_bleu(hyps, refs)
    no_unk = [i for i in range(len(srcs))
              if not src_codec.has_unk(srcs[i]) and not tgt_codec.has_unk(refs[i])]
    bleu_no_unk = corpus_bleu([hyps[i] for i in no_unk], [refs[i] for i in no_unk])[0] if no_unk else None
    lengths = [len(src_codec.words(s)) for s in srcs]
    chrf, chrf_signature = corpus_chrf(hyps, refs)
    return {"bleu": bleu, "signature": signature, "n": len(srcs), "bleu_no_unk": bleu_no_unk,
            "n_no_unk": len(no_unk), "chrf": chrf, "chrf_signature": chrf_signature,
            "by_length": bleu_by_length(hyps, refs, lengths), "length_unit": length_unit(src_codec)}


def evaluate(translator, srcs: list[str], refs: list[str], settings=None, progress=None) -> dict:
    """Translate ``srcs`` with ``translator`` (SearchSettings ``settings``; None: the model's
    decode section) and score against ``refs``."""
    if len(srcs) != len(refs):
        raise DataError(f"{len(srcs)} source lines but {len(refs)} reference lines")
    settings = translator.search_settings() if settings is None else settings.resolve(translator.decode_cfg)
    found = translator.translate(srcs, settings, progress)
    hyps = [t.text for t in found]
    result = score_translations(hyps, refs, srcs, translator.src_codec, translator.tgt_codec)
    if translator.replace_unk:  # the same search with each <unk> as written, beside
        from rnnsearch.decoding.unk import as_written
        kept = [translator.tgt_codec.units_to_text(as_written(t)) for t in found]
        result["unk_replaced"] = {"mode": translator.replace_unk, "tokens": sum(len(t.replaced) for t in found),
                                  "bleu_keep_unk": corpus_bleu(kept, refs)[0], "chrf_keep_unk": corpus_chrf(kept, refs)[0]}
    result["beam"] = None if settings.sampling else settings.beam
    if settings.sampling:
        result["sampling"] = settings.sampling.model_dump()
    result["hypotheses"] = hyps
    return result


def table1(results: dict[str, dict], paper: dict[str, tuple[float, float]] | None = None) -> list[str]:
    """Markdown rows of the paper's Table 1, one per model: BLEU on All and on No UNK, then the
    sentence counts, or, with ``paper`` (name -> (All, No UNK)), the paper's numbers beside."""
    extra = ["paper All", "paper No UNK"] if paper is not None else ["sentences (No UNK)"]
    lines = ["| Model | All | No UNK | " + " | ".join(extra) + " |", "| --- |" + " --- |" * (2 + len(extra))]
    for name, r in results.items():
        nounk = "-" if r["bleu_no_unk"] is None else f"{r['bleu_no_unk']:.2f}"
        if paper is None:
            cells = [f"{r['n']} ({r['n_no_unk']})"]
        else:
            cells = [f"{v:.2f}" for v in paper[name]] if name in paper else ["-", "-"]
        lines.append(f"| {name} | {r['bleu']:.2f} | {nounk} | " + " | ".join(cells) + " |")
    return lines


def format_table(results: dict[str, dict]) -> str:
    """Markdown: Table 1 (All, No UNK), chrF and BLEU by source length, one row per model."""
    unit = next(iter(results.values())).get("length_unit", "words")
    return "\n".join(table1(results) + [""] + chrf_table(results) + ["", f"BLEU by source length ({unit}):", ""]
                     + length_table(results))


def chrf_table(results: dict[str, dict]) -> list[str]:
    """Markdown rows: each model's chrF on every sentence (a character-level score, beside BLEU)."""
    return ["| Model | chrF |", "| --- | --- |"] + [f"| {name} | {r['chrf']:.2f} |" for name, r in results.items()]


def length_table(results: dict[str, dict]) -> list[str]:
    """Markdown rows: BLEU (and sentence count) per source-length bucket, one row per model."""
    buckets = []
    for r in results.values():
        for b in r["by_length"]:
            if b["bucket"] not in buckets:
                buckets.append(b["bucket"])
    lines = ["| Model | " + " | ".join(buckets) + " |", "| --- |" + " --- |" * len(buckets)]
    for name, r in results.items():
        cells = {b["bucket"]: f"{b['bleu']:.2f} (n={b['n']})" for b in r["by_length"]}
        lines.append(f"| {name} | " + " | ".join(cells.get(b, "-") for b in buckets) + " |")
    return lines
