"""``rnnsearch export`` and ``average``: a model ready to ship."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("export", help="the model as ONNX graphs (encoder, one decoder step) with its vocabularies")
    p.add_argument("checkpoint")
    p.add_argument("--format", choices=["onnx"], default="onnx")
    p.add_argument("--out", required=True, help="directory for encoder.onnx, decoder_step.onnx and model.json")
    p.add_argument("--quantize", choices=["int8"], default=None,
                   help="also write decoder_step.int8.onnx (onnxruntime's dynamic int8 quantisation)")
    p.set_defaults(func=export)

    p = sub.add_parser("average", help="average the parameters of checkpoints of one model")
    p.add_argument("checkpoints", nargs="+", metavar="CKPT")
    p.add_argument("--out", required=True, help="the averaged checkpoint")
    p.set_defaults(func=average)


def export(args) -> int:
    from rnnsearch.decoding.backends import quantized_step
    from rnnsearch.decoding.export import export as write
    from rnnsearch.decoding.translator import Translator
    out = write(Translator.from_checkpoint(args.checkpoint), args.out)
    if args.quantize:
        quantized_step(out)
    files = sorted(p.name for p in out.iterdir())
    print(f"exported {args.checkpoint} to {out}: {', '.join(files)}")
    print(f"translate with: rnnsearch translate {out} --backend onnx" + (" --quantize int8" if args.quantize else ""))
    return 0


def average(args) -> int:
    from rnnsearch.decoding.average import average_checkpoints
    average_checkpoints(args.checkpoints, args.out)
    print(f"averaged {len(args.checkpoints)} checkpoints into {args.out}")
    return 0
