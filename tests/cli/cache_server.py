"""A local LLM-like HTTP API with a prefix cache, for the cache audit's tests
(issue 30): 127.0.0.1, a free port, standard library only.

    python3 cache_server.py [--hit-ms 1] [--miss-ms 15]    prints its port, serves

  POST /v1/completions  JSON body {"prompt": "...", ...}: a prompt seen before
                        answers after --hit-ms, a new one after --miss-ms (its
                        "prefill"); 200 {"text": "ok"}
  GET /metrics          Prometheus text: vllm:prefix_cache_queries_total and
                        vllm:prefix_cache_hits_total (in prompt characters, as
                        vLLM counts tokens), with labels as vLLM's have
Anything else is 404. The test stops it by its PID."""
import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
SEEN = set()
COUNTS = {"queries": 0, "hits": 0}


def make_handler(hit_s, miss_s):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one answer, no 40 ms delayed-ACK wait

        def log_message(self, *args):
            pass

        def answer(self, code, body, ctype="application/json"):
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path != "/metrics":
                return self.answer(404, "{}")
            with LOCK:
                q, h = COUNTS["queries"], COUNTS["hits"]
            labels = '{engine="0",model_name="test"}'
            text = ("# HELP vllm:prefix_cache_queries_total Prefix cache queries, in tokens.\n"
                    "# TYPE vllm:prefix_cache_queries_total counter\n"
                    f"vllm:prefix_cache_queries_total{labels} {float(q)}\n"
                    "# HELP vllm:prefix_cache_hits_total Prefix cache hits, in tokens.\n"
                    "# TYPE vllm:prefix_cache_hits_total counter\n"
                    f"vllm:prefix_cache_hits_total{labels} {float(h)}\n")
            self.answer(200, text, "text/plain; version=0.0.4")

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n)
            if self.path == "/v1/raw":  # any body, no cache
                return self.answer(200, "{}")
            if self.path != "/v1/completions":
                return self.answer(404, "{}")
            try:
                prompt = json.loads(body)["prompt"]
            except (ValueError, KeyError, TypeError):
                return self.answer(400, '{"error": "a JSON body with a prompt"}')
            key = json.dumps(prompt)
            with LOCK:
                hit = key in SEEN
                SEEN.add(key)
                COUNTS["queries"] += len(key)
                if hit:
                    COUNTS["hits"] += len(key)
            time.sleep(hit_s if hit else miss_s)
            self.answer(200, '{"text": "ok"}')

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hit-ms", type=float, default=1.0)
    ap.add_argument("--miss-ms", type=float, default=15.0)
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(a.hit_ms / 1e3, a.miss_ms / 1e3))
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
