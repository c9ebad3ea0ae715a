"""``rnnsearch serve``: the HTTP API and web page. Its limits' flags are made from ServeSettings'
fields, so that the defaults live in one place (serve/settings.py)."""
from __future__ import annotations

import sys

from rnnsearch.cli.common import (MODEL_HELP, add_backend_args, add_device_arg, add_settings_flags, no_shortlist_on_onnx,
                                  set_shortlist, settings_from_flags)

FLAGS = {"timeout_s": "--timeout", "drain_s": "--drain-timeout"}  # fields whose flag is not --field-name


def register(sub) -> None:
    from rnnsearch.serve.settings import ServeSettings
    p = sub.add_parser("serve", help="HTTP API and web page: translations with their alignments")
    p.add_argument("checkpoint", help=MODEL_HELP + "; rnnsearch's own routes use it")
    p.add_argument("more", nargs="*", metavar="MODEL", help="more models, one per (source, target) pair: the "
                   "LibreTranslate routes (/translate with q, /languages, /detect) send each request to the model "
                   "of its pair (both Hansards directions in one server)")
    p.add_argument("--api-keys", metavar="FILE", help="API keys, as LibreTranslate's: one key a line (a tab and its "
                   "requests per minute, optionally); an unknown key gets 403 on every route that translates or "
                   "scores; a request without one gets --req-limit; off by default")
    p.add_argument("--req-limit", type=int, default=0, metavar="N", help="requests per minute per client (its key, "
                   "else its address) before 429, on every route that translates or scores (default 0: no limit)")
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (0.0.0.0: every interface)")
    p.add_argument("--port", type=port_number, default=8000, help="the port to listen on")
    p.add_argument("--forwarded-allow-ips", metavar="IPS", help="behind a reverse proxy: the proxies' addresses "
                   "(comma-separated, or *) whose X-Forwarded-For names the client, for --req-limit (default: "
                   "none, the connection's address)")
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
    from rnnsearch.errors import UsageError
    from rnnsearch.serve.access import Access, read_api_keys
    if args.req_limit < 0:
        raise UsageError(f"--req-limit must be 0 (no limit) or more, got {args.req_limit}")
    if args.shortlist and args.more:
        raise UsageError("--shortlist is one model's lexicon (one direction): serve a single model with it")
    no_shortlist_on_onnx(args)
    free_port(args.host, args.port)  # before the models load, not after
    access = Access(read_api_keys(args.api_keys) if args.api_keys else None, args.req_limit)
    models = []
    for name in [args.checkpoint, *args.more]:
        models.append(Translator.from_pretrained(name, device=args.device, backend=args.backend,
                                                 quantize=args.quantize, dtype=args.dtype))
        set_shortlist(args, models[-1])
    translator = models[0]
    app = create_app(translator, settings, checkpoint=args.checkpoint, others=tuple(models[1:]), access=access)
    pairs = ", ".join(f"{t.src_codec.lang}->{t.tgt_codec.lang} {t.name}" for t in models)
    print(f"rnnsearch serve: {pairs} on http://{args.host}:{args.port}/ "
          f"(API docs at /docs; batching {'on' if settings.batching else 'off'}; {args.backend}"
          f"{' int8' if args.quantize else ''}{' bf16' if args.dtype == 'bf16' else ''}"
          f"{' shortlist ' + args.shortlist if args.shortlist else ''}; LibreTranslate API: keys "
          f"{'on' if access.keys_on else 'off'}, {args.req_limit or 'no'} limit)", file=sys.stderr)
    run_server(app, args.host, args.port, args.log_level, settings.drain_s, args.forwarded_allow_ips)
    return 0


def port_number(text: str) -> int:
    """--port's value: a TCP port, 1 to 65535 (99999 was an OverflowError after the model had loaded)."""
    import argparse
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: a port is a number from 1 to 65535")
    return int(text)


def free_port(host: str, port: int) -> None:
    """A UsageError where the server could not listen on ``host``:``port`` (another server holds it)."""
    import socket
    from rnnsearch.errors import UsageError
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind((host, port))
    except OSError as exc:
        import errno
        held = "; another server may hold it: choose another --port" if exc.errno == errno.EADDRINUSE else \
            ": give an address of this machine as --host (127.0.0.1, or 0.0.0.0 for all)"
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{held}") from None
