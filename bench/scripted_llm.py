#!/usr/bin/env python3
"""A scripted OpenAI-compatible server for throughput benchmarks.

    python3 bench/scripted_llm.py --port 18300 --slots 4 --latency-ms 200

Every chat request holds one of --slots for --latency-ms (requests beyond the
slots queue, as on a real server with N parallel slots), then answers a
valid summary derived from the request (or an empty proposal list).
Standard library only. Counts requests; GET /stats returns them as JSON.
"""
import argparse
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--slots", type=int, default=4)
ap.add_argument("--latency-ms", type=int, default=200)
args = ap.parse_args()
slots = threading.Semaphore(args.slots)
count = {"chat": 0}
lock = threading.Lock()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.endswith("/models"):
            self.reply(200, {"data": [{"id": "bench-model"}]})
        elif self.path == "/stats":
            self.reply(200, count)
        else:
            self.reply(404, {"error": "no"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n) or b"{}")
        msgs = req.get("messages", [])
        text = json.dumps(msgs)
        with slots:
            time.sleep(args.latency_ms / 1000.0)
        with lock:
            count["chat"] += 1
        if msgs and str(msgs[0].get("content", "")).startswith("A new node was added"):
            content = json.dumps({"related": []})
        else:
            h = hashlib.sha256(text.encode()).hexdigest()[:6]
            content = json.dumps({"summary": f"Benchmark summary {h} of a synthetic document.", "tags": ["bench"]})
        self.reply(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", args.port), H).serve_forever()
