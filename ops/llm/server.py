#!/usr/bin/env python3
"""Launch llama.cpp's HTTP server through xllamacpp (it has no CLI).

Usage: server.py --model PATH [--host 127.0.0.1] [--port 18080]
                 [--ctx 4096] [--threads 2]

The server runs on a background thread inside xllamacpp; this process sleeps
until SIGTERM/SIGINT so it can be managed through a pid file.
"""
import argparse
import signal
import sys
import threading

import xllamacpp


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=18080)
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--parallel", type=int, default=1)
    args = ap.parse_args()

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    # Newer xllamacpp builds take a list of hostnames; older ones one string.
    if hasattr(params, "hostnames"):
        params.hostnames = [args.host]
    else:
        params.hostname = args.host
    params.port = args.port
    # llama.cpp splits n_ctx across slots: keep --ctx tokens per slot.
    params.n_ctx = args.ctx * max(1, args.parallel)
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_parallel = args.parallel
    params.use_jinja = True

    stop = threading.Event()

    def on_signal(_signum, _frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    server = xllamacpp.Server(params)  # serves from a background thread
    print(f"server.py: serving {args.model} on http://{args.host}:{args.port}/v1",
          flush=True)
    while not stop.wait(1.0):
        pass
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
