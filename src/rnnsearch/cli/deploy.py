"""``rnnsearch export``, ``average`` and ``release``: a model ready to ship."""
from __future__ import annotations

from rnnsearch.cli.common import MODEL_HELP


def register(sub) -> None:
    p = sub.add_parser("export", help="the model as ONNX graphs (encoder, one decoder step) with its vocabularies")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--format", choices=["onnx"], default="onnx", help="the export's format")
    p.add_argument("--out", required=True, help="directory for encoder.onnx, decoder_step.onnx and model.json")
    p.add_argument("--quantize", choices=["int8"], default=None,
                   help="also write decoder_step.int8.onnx (onnxruntime's dynamic int8 quantisation)")
    p.set_defaults(func=export)

    p = sub.add_parser("average", help="average the parameters of checkpoints of one model")
    p.add_argument("checkpoints", nargs="+", metavar="CKPT", help="checkpoints of one model (same config and vocabularies)")
    p.add_argument("--out", required=True, help="the averaged checkpoint")
    p.set_defaults(func=average)

    p = sub.add_parser("release", help="a checkpoint as a released model: bf16 (or int8) weights, vocabularies, config, "
                       "training log and a model card, in one folder (models/NAME)")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--out", help="the release folder; its name is the model's (models/NAME)")
    p.add_argument("--measure", action="store_true", help="CHECKPOINT is a release: measure it on --src/--ref "
                   "again, in place (its test output, release.json's scores and the card; the weights untouched)")
    p.add_argument("--src", help="test source: measure the test BLEU from the released weights (with --ref)")
    p.add_argument("--ref", help="test references")
    p.add_argument("--beam", type=int, default=None, help="beam for the test (default: the config's decode.beam)")
    p.add_argument("--description", default="", help="one paragraph for the model card")
    p.add_argument("--force", action="store_true", help="replace an existing release of that name")
    p.add_argument("--dtype", choices=["bfloat16", "int8"], default="bfloat16",
                   help="int8: matrices in int8 with a scale per row (a quarter of float32's bytes), released only "
                        "where its test BLEU is within --parity of bf16's (needs --src, --ref)")
    p.add_argument("--parity", type=float, default=0.1, help="the BLEU difference int8 may have from bf16")
    p.set_defaults(func=release)


def export(args) -> int:
    from rnnsearch.extras import require
    require("onnx", "rnnsearch export")
    from rnnsearch.decoding.backends import quantized_step
    from rnnsearch.decoding.export import export as write
    from rnnsearch.decoding.translator import Translator
    out = write(Translator.from_pretrained(args.checkpoint), args.out)
    if args.quantize:
        quantized_step(out)
    files = sorted(p.name for p in out.iterdir())
    print(f"exported {args.checkpoint} to {out}: {', '.join(files)}")
    print(f"translate with: rnnsearch translate {out} --backend onnx" + (" --quantize int8" if args.quantize else ""))
    return 0


def average(args) -> int:
    from rnnsearch.decoding.average import average_checkpoints
    from rnnsearch.decoding.pretrained import resolve
    from rnnsearch.files import writable_file
    paths = [str(resolve(c)) for c in args.checkpoints]  # a release's name or folder as well as a checkpoint
    writable_file(args.out, paths)  # average A.pt B.pt --out A.pt wrote over A.pt
    average_checkpoints(paths, args.out)
    print(f"averaged {len(args.checkpoints)} checkpoints into {args.out}")
    return 0


def release(args) -> int:
    from pathlib import Path

    from rnnsearch.analysis.release import make_release, measure_release
    from rnnsearch.decoding.pretrained import resolve
    from rnnsearch.errors import UsageError
    weights = resolve(args.checkpoint)  # a release's name or folder as well as a checkpoint (both were refused)
    if (args.src is None) != (args.ref is None):
        raise UsageError("--src and --ref go together")
    test = (args.src, args.ref) if args.src else None
    if args.measure:
        if test is None or args.out:
            raise UsageError("--measure measures the release CHECKPOINT in place: give --src and --ref, not --out")
        measure_release(args.checkpoint if Path(args.checkpoint).is_dir() else Path(weights).parent, test, args.beam)
        return 0
    if not args.out:
        raise UsageError("--out is required: the release folder to write (models/NAME)")
    make_release(weights, args.out, test=test, beam=args.beam, description=args.description, force=args.force,
                 dtype=args.dtype, parity=args.parity)
    print(f"translate with: rnnsearch translate {args.out}; Python: Translator.from_pretrained({args.out!r})")
    return 0
