"""Figures: alignment matrices (the paper's Figure 3) and BLEU by length (Figure 2)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _save(fig, path: str | Path) -> Path:
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_alignment(attention: np.ndarray, source_tokens: list[str], output_tokens: list[str],
                   path: str | Path, title: str | None = None) -> Path:
    """alpha_ij as a grayscale image (white = 1): source words on x, output words on y."""
    attention = np.asarray(attention)
    if attention.shape != (len(output_tokens), len(source_tokens)):
        raise ValueError(f"attention {attention.shape} does not match {len(output_tokens)} output x "
                         f"{len(source_tokens)} source tokens")
    width = max(4.0, 0.42 * len(source_tokens) + 1.5)
    height = max(3.0, 0.42 * len(output_tokens) + 1.5)
    fig, ax = plt.subplots(figsize=(width, height))
    ax.imshow(attention, cmap="gray", vmin=0.0, vmax=1.0, aspect="equal", interpolation="nearest")
    ax.set_xticks(range(len(source_tokens)))
    ax.set_xticklabels(source_tokens, rotation=90)
    ax.set_yticks(range(len(output_tokens)))
    ax.set_yticklabels(output_tokens)
    ax.xaxis.tick_top()
    if title:
        ax.set_title(title, fontsize=9, pad=12, y=-0.08)
    return _save(fig, path)


def plot_bleu_by_length(results: dict[str, list[dict]], path: str | Path,
                        title: str = "BLEU by source sentence length", unit: str = "words") -> Path:
    """One line per model: BLEU of each source-length bucket (x labelled with the bucket and n)."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    labels: list[str] = []
    for rows in results.values():
        for r in rows:
            if r["bucket"] not in labels:
                labels.append(r["bucket"])
    order = {b: i for i, b in enumerate(labels)}
    for name, rows in results.items():
        ax.plot([order[r["bucket"]] for r in rows], [r["bleu"] for r in rows], marker="o", label=name)
    counts = {r["bucket"]: r["n"] for rows in results.values() for r in rows}
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([f"{b}\n(n={counts[b]})" for b in labels], fontsize=8)
    ax.set_xlabel(f"source sentence length ({unit})")
    ax.set_ylabel("BLEU")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    return _save(fig, path)
