"""``rnnsearch serve``: the HTTP API and web page. Its limits' flags are made from ServeSettings'
fields, so that the defaults live in one place (serve/settings.py)."""
from __future__ import annotations

import sys

from rnnsearch.cli.common import (MODEL_HELP, add_backend_args, add_device_arg, add_settings_flags, set_shortlist,
                                  settings_from_flags)

FLAGS = {"timeout_s": "--timeout", "drain_s": "--drain-timeout"}  # fields whose flag is not --field-name


def register(sub) -> None:
    from rnnsearch.serve.settings import ServeSettings
    p = sub.add_parser("serve", help="HTTP API and web page: translations with their alignments")
    p.add_argument("checkpoint", help=MODEL_HELP)
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (0.0.0.0: every interface)")
    p.add_argument("--port", type=int, default=8000, help="the port to listen on")
    add_device_arg(p)
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                   help="uvicorn's log level")
    add_backend_args(p, ensemble=False)
    add_settings_flags(p, ServeSettings, FLAGS)
    p.set_defaults(func=serve, tune=True)


def serve(args) -> int:
    from rnnsearch.extras import require
    require("serve", "rnnsearch serve")
    from rnnsearch.decoding.translator import Translator
    from rnnsearch.serve import ServeSettings, create_app
    from rnnsearch.serve.server import serve as run_server
    settings = settings_from_flags(ServeSettings, args, FLAGS)
    translator = Translator.from_pretrained(args.checkpoint, device=args.device, backend=args.backend,
                                            quantize=args.quantize, dtype=args.dtype)
    set_shortlist(args, translator)
    app = create_app(translator, settings, checkpoint=args.checkpoint)
    print(f"rnnsearch serve: {translator.name} on http://{args.host}:{args.port}/ "
          f"(API docs at /docs; batching {'on' if settings.batching else 'off'}; {args.backend}"
          f"{' int8' if args.quantize else ''}{' bf16' if args.dtype == 'bf16' else ''}"
          f"{' shortlist ' + args.shortlist if args.shortlist else ''})", file=sys.stderr)
    run_server(app, args.host, args.port, args.log_level, settings.drain_s)
    return 0
