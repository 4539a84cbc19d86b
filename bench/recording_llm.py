#!/usr/bin/env python3
"""A recording scripted OpenAI-compatible server (issue 35's prompt-size bench).

    python3 bench/recording_llm.py --port 18310 --log /tmp/requests.jsonl

Every chat request is appended to --log as one JSON line: the request kind
(summary, branch, proposal), its prompt tokens by the project's estimator
(code points / 4, rounded up, over every message's content) and the first
200 characters of its last message. Answers are grounded by construction
so that neither engine retries: a leaf summary is the first sentence of
the content it was given (cut to 200 characters), a branch summary the
first entry's summary, a proposal an empty list. With --upstream URL (an OpenAI-compatible /v1) every request is forwarded
there instead and the reply returned as is; the log then also carries the
server's usage.prompt_tokens and the request's seconds. Standard library only.
"""
import argparse
import json
import re
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--upstream", default=None)
args = ap.parse_args()
lock = threading.Lock()


def tokens(text: str) -> int:
    return 0 if not text else max(1, (len(text) + 3) // 4)


def first_sentence(text: str) -> str:
    """The first sentence of four words or more, each word once (no
    repeated phrase), at most 24 words, not opening with "This ..."."""
    for line in text.splitlines():
        line = re.sub(r"^[#>*\-\s]+", "", line).strip()
        if len(line.split()) >= 4:
            s = re.split(r"(?<=[.!?])\s", line)[0]
            seen, out = set(), []
            for w in s.split():
                k = re.sub(r"\W", "", w.lower())
                if k in seen:
                    continue
                seen.add(k)
                out.append(w)
            if out and out[0].lower() == "this":
                out = out[3:]
            out = out[:24]
            if len(out) >= 4:
                return " ".join(out).rstrip(".,;:") + "."
    return ""


def kind_of(msgs) -> str:
    first = str(msgs[0].get("content", "")) if msgs else ""
    if "A new node was added" in first or "You connect nodes" in first:
        return "proposal"
    if "REGION" in first:
        return "branch"
    return "summary"


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

    def forward(self, method, body=None):
        url = args.upstream.rstrip("/") + self.path[self.path.index("/v1") + 3:]
        req = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=600) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def do_GET(self):
        if args.upstream:
            self.reply(*self.forward("GET"))
        elif self.path.endswith("/models"):
            self.reply(200, {"data": [{"id": "recording-model"}]})
        else:
            self.reply(404, {"error": "no"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n) or b"{}"
        req = json.loads(raw)
        msgs = req.get("messages", [])
        kind = kind_of(msgs)
        prompt = sum(tokens(str(m.get("content", ""))) for m in msgs)
        last = str(msgs[-1].get("content", "")) if msgs else ""
        user = next((str(m.get("content", "")) for m in msgs if m.get("role") == "user"), "")
        title = re.search(r"^Title: (.*)$", user, re.M)
        rec = {"kind": kind, "prompt_tokens": prompt, "messages": len(msgs),
               "title": title.group(1) if title else None, "head": last[:200]}
        if args.upstream:
            t0 = time.time()
            code, obj = self.forward("POST", raw)
            rec["seconds"] = round(time.time() - t0, 3)
            rec["usage_prompt_tokens"] = (obj.get("usage") or {}).get("prompt_tokens")
            rec["status"] = code
            with lock:
                with open(args.log, "a") as f:
                    f.write(json.dumps(rec) + "\n")
            self.reply(code, obj)
            return
        with lock:
            with open(args.log, "a") as f:
                f.write(json.dumps(rec) + "\n")
        if kind == "proposal":
            content = json.dumps({"related": []})
        elif kind == "branch":
            body = user.split("Children:", 1)[-1]
            m = re.search(r"\]\]\s*[—-]+\s*(.+)", body)
            content = json.dumps({"summary": first_sentence(m.group(1)) if m else "Entries."})
        else:
            body = user.split("Content:", 1)[-1]
            content = json.dumps({"summary": first_sentence(body) or "Notes.", "tags": []})
        self.reply(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                         "usage": {"prompt_tokens": prompt, "completion_tokens": 20}})


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", args.port), H).serve_forever()
