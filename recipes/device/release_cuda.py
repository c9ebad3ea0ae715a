"""The released RNNsearch-50 (int8 + alignment head) on CUDA: Hansards test at beam 12 against the
card's CPU output (test.hyp.fr), and the head's alignment on WPT 2003 (both halves). Writes
$OUT/release_cuda.json and $OUT/test.hyp.cuda.fr. Arguments: decode batch sizes (0 = the translator's).

Staged here (the device tool sends the working tree and `carry` [".gpu"], 64 MiB in all: move
the other releases aside for the call): the wheels of recipes/device/cuda_checks.sh
in .gpu/whl; ../shared/data/hansards/test.{en,fr} and ../shared/data/alignment/hansards_enfr/test.{en-fr,gold}
in .gpu/data; this file as .gpu/release_cuda.py. There:
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        .gpu/whl/*.whl && export PYTHONPATH=/tmp/site:$PWD/src && python3 .gpu/release_cuda.py 0 128
LINES=4 DEVICE=cpu: a smoke test here."""
import json
import os
import sys
import time
from pathlib import Path

import sacrebleu
import torch

from rnnsearch.analysis.force_align import force_align
from rnnsearch.analysis.links import alignment_error_rate, read_wpt_gold
from rnnsearch.data.io import read_lines
from rnnsearch.decoding.translator import Translator

out, data, name = Path(os.environ["OUT"]), Path(".gpu/data"), "models/hansards_enfr_rnnsearch50"
dev, lines = os.environ.get("DEVICE", "cuda"), int(os.environ.get("LINES", "0")) or None  # LINES, DEVICE: a smoke test
sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
res = {"gpu": torch.cuda.get_device_name(0) if dev == "cuda" else "cpu", "torch": torch.__version__}
card = json.loads(Path(name, "release.json").read_text())
t = Translator.from_pretrained(name, device=dev)
src, ref, cpu = (read_lines(p)[:lines] for p in (data / "test.en", data / "test.fr", Path(name, "test.hyp.fr")))
for batch in [int(b) for b in sys.argv[1:]] or [0]:
    sync()
    start = time.time()
    hyps = [h.text for h in t.translate(src, t.search_settings(beam=12, batch_size=batch or None))]
    sync()
    res[f"batch{batch}"] = {"seconds": round(time.time() - start, 1), "bleu": sacrebleu.corpus_bleu(hyps, [ref]).score,
                            "lines_differing_from_cpu": sum(a != b for a, b in zip(hyps, cpu))}
    print(res, flush=True)
(out / "test.hyp.cuda.fr").write_text("".join(h + "\n" for h in hyps))
res["card_bleu_cpu"] = card["test"]["bleu"]
pairs = []
for line in read_lines(data / "test.en-fr"):
    s, g = line.split(" ||| ")
    pairs.append((" ".join(s.split()), " ".join(g.split())))
gold = read_wpt_gold(data / "test.gold")
start = time.time()
links = [a.links for a in force_align(t, pairs, reading="head+posterior", extract="intersection")]
res["align_seconds"] = round(time.time() - start, 1)
res["aer_held_out_224_447"] = alignment_error_rate(links[223:], gold[223:])
res["aer_1_223"] = alignment_error_rate(links[:223], gold[:223])
print(res, flush=True)
(out / "release_cuda.json").write_text(json.dumps(res, indent=1) + "\n")
