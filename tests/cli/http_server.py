"""A local HTTP/1.1 API for the HTTP target's tests: 127.0.0.1, a free port,
keep-alive (every answer has a Content-Length), standard library + numpy only.

    with HttpTestServer() as srv:
        url = srv.url("/depth")
        ...
        srv.connections, srv.requests, srv.seen[-1]["headers"]

Handlers (any method; a request body is always read in full):
  /depth           NPZ body with 'rgb' uint8 HxWx3 -> NPZ with 'depth' float32 HxW
                   (the channel mean / 255, like demo_depth); 400 for anything else
  /sleep?ms=N      sleeps N ms, then 200 "ok"
  /fail            500
  /flaky?every=N   500 for every Nth request to it, 200 otherwise
  /fail-then-hang?n=N  500 for the first N requests to it, then never answers
  /status?code=N   answers N (e.g. 302 with a Location, to check redirects are not followed)
  /hang            never answers (the client's timeout ends it)
  /echo-headers    200 with the received headers as a JSON object
  /sse?first=MS&every=MS&n=N&tokens=T&usage=0|1&done=0|1
                   text/event-stream, chunked: a role-only chunk at once (no content),
                   after `first` ms the first of N content events (OpenAI chat chunks),
                   then one every `every` ms (relative sleeps: each gap >= every);
                   with usage=1 a usage-only chunk (completion_tokens T, default 2 N),
                   with done=1 `data: [DONE]`
  /locked?ms=M&stall_at=K&stall_ms=S  one request at a time (a server-wide lock), each
                   M ms (default 2), except the K-th to this route (1-based), S ms: a stall
  /lines?first=MS&every=MS&n=N  application/x-ndjson, chunked: N JSON lines
                   {"response": "w", "eval_count": k (cumulative)}, timed as /sse
  /stale          200 for the first request on a connection; a later one on the same
                   connection is read and the connection closed without an answer (a
                   kept-alive connection the server dropped: clients send again on a new one)
  /raw?kind=K      framings other than Content-Length: chunked (3 chunks, 12 bytes),
                   eof (12 bytes, then the connection closes: no length), http10 (an
                   HTTP/1.0 answer with a length, then close), nocontent (204)
  /close?say=0|1   200, then the connection closes; say=1 announces it (Connection: close)
  /early           413 at once, before reading the request's body (which is then read and
                   dropped: the connection stays usable for a client that sent all of it)
  /raw?kind=304cl  a 304 with a Content-Length (no body: RFC 9112 6.3); kind=204te a 204
                   with Transfer-Encoding: chunked (no body either)
Anything else is 404. `python3 http_server.py` serves until Ctrl-C."""
import io
import json
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np


def depth_of(rgb):
    """The /depth model: mean over the channels / 255, float32 HxW."""
    return (rgb.astype(np.float32).mean(axis=2) / np.float32(255)).astype(np.float32)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    server_version = "rpxprof-test"

    def setup(self):  # once per connection
        super().setup()
        # headers and body go out as separate writes: without this, Nagle's algorithm
        # and the client's delayed ACK hold the body back ~40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.owner.lock:
            self.server.owner.connections += 1

    def log_message(self, *args):  # quiet
        pass

    def _answer(self, code, body=b"", content_type="text/plain", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def _dispatch(self):
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        if self.path.startswith("/early"):
            with owner.lock:
                owner.requests += 1
                owner.seen.append({"method": self.command, "path": self.path,
                                   "headers": dict(self.headers.items()), "body_bytes": None})
            self._answer(413, b"too large")
            self.wfile.flush()
            try:
                while length > 0:
                    chunk = self.rfile.read(min(length, 1 << 16))
                    if not chunk:
                        break
                    length -= len(chunk)
            except OSError:
                pass
            if length:
                self.close_connection = True
            return None
        body = self.rfile.read(length) if length else b""
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        with owner.lock:
            owner.requests += 1
            owner.seen.append({"method": self.command, "path": self.path,
                               "headers": dict(self.headers.items()), "body_bytes": len(body)})
        route = url.path
        if route == "/depth":
            try:
                with np.load(io.BytesIO(body), allow_pickle=False) as z:
                    rgb = z["rgb"]
                if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
                    raise ValueError(f"rgb: expected uint8 HxWx3, got {rgb.dtype} {rgb.shape}")
            except Exception as e:  # noqa: BLE001 - any bad body is the client's error
                return self._answer(400, f"bad request: {e}".encode())
            out = io.BytesIO()
            np.savez(out, depth=depth_of(rgb))
            return self._answer(200, out.getvalue(), "application/x-npz")
        if route == "/sleep":
            time.sleep(int(query.get("ms", ["0"])[0]) / 1000.0)
            return self._answer(200, b"ok")
        if route == "/fail":
            return self._answer(500, b"failed on purpose")
        if route == "/bigheader":  # one response header of `kb` KiB (curl takes 100 KiB)
            big = "a" * (int(query.get("kb", ["1024"])[0]) * 1024)
            return self._answer(200, b"ok", extra=(("X-Big", big),))
        if route == "/flaky":
            n = sum(1 for s in owner.seen if s["path"].startswith("/flaky"))
            every = int(query.get("every", ["5"])[0])
            return self._answer(500 if n % every == 0 else 200, b"flaky")
        if route == "/fail-then-hang":
            n = sum(1 for s in owner.seen if s["path"].startswith("/fail-then-hang"))
            if n <= int(query.get("n", ["2"])[0]):
                return self._answer(500, b"failing first")
            owner.stopping.wait()
            self.close_connection = True
            return None
        if route == "/status":
            code = int(query.get("code", ["200"])[0])
            extra = [("Location", "/sleep?ms=0")] if 300 <= code < 400 else []
            return self._answer(code, b"status", extra=extra)
        if route == "/hang":
            owner.stopping.wait()  # until the server stops; the client times out first
            self.close_connection = True
            return None
        if route == "/locked":
            with owner.locked_lock:
                owner.locked_count += 1
                k = owner.locked_count
                stall = k == int(query.get("stall_at", ["0"])[0])
                ms = int(query.get("stall_ms" if stall else "ms", ["1000" if stall else "2"])[0])
                time.sleep(ms / 1000.0)
            return self._answer(200, b"ok")
        if route in ("/sse", "/lines"):
            return self._stream(route, query)
        if route == "/stale":
            self.served = getattr(self, "served", 0) + 1
            if self.served > 1:
                self.close_connection = True
                return None
            return self._answer(200, b"ok")
        if route == "/raw":
            kind = query.get("kind", ["chunked"])[0]
            if kind == "chunked":
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for part in (b"abcd", b"efgh", b"ijkl"):
                    self._chunk(part)
                self.wfile.write(b"0\r\n\r\n")
            elif kind == "eof":
                self.send_response(200)
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(b"abcdefghijkl")
                self.close_connection = True
            elif kind == "304cl":
                self.wfile.write(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 12\r\n\r\n")
            elif kind == "204te":
                self.wfile.write(b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n")
            elif kind == "http10":
                self.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\nabcdefghijkl")
                self.close_connection = True
            else:
                self.send_response(204)
                self.end_headers()
            return None
        if route == "/close":
            say = query.get("say", ["1"])[0] == "1"
            self._answer(200, b"ok", extra=[("Connection", "close")] if say else ())
            self.close_connection = True
            return None
        if route == "/echo-headers":
            return self._answer(200, json.dumps(dict(self.headers.items())).encode(),
                                "application/json")
        return self._answer(404, b"not found")

    def _chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _stream(self, route, query):
        def num(name, default):
            return int(query.get(name, [str(default)])[0])
        n, first, every = num("n", 10), num("first", 200), num("every", 20)
        sse = route == "/sse"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if sse else "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def event(obj):
            line = json.dumps(obj).encode()
            self._chunk(b"data: " + line + b"\n\n" if sse else line + b"\n")
        if sse:
            event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        time.sleep(first / 1000.0)
        for k in range(n):
            if k:
                time.sleep(every / 1000.0)
            if sse:
                event({"choices": [{"index": 0, "delta": {"content": f"w{k} "}}]})
            else:
                event({"response": f"w{k} ", "eval_count": k + 1})
        if sse and num("usage", 1):
            event({"choices": [], "usage": {"prompt_tokens": 5,
                                            "completion_tokens": num("tokens", 2 * n)}})
        if sse and num("done", 1):
            self._chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        return None

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _dispatch


class HttpTestServer:
    """The test API in a background thread; a context manager (start/stop)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.connections = 0
        self.requests = 0
        self.seen = []
        self.locked_lock = threading.Lock()
        self.locked_count = 0
        self._httpd = None
        self._thread = None

    @property
    def port(self):
        return self._httpd.server_address[1]

    def url(self, path="/"):
        return f"http://127.0.0.1:{self.port}{path}"

    def reset_counts(self):
        with self.lock:
            self.connections = 0
            self.requests = 0
            self.seen = []

    def start(self):
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True  # /hang never holds up the exit
        self._httpd.owner = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        kwargs={"poll_interval": 0.05})
        self._thread.start()
        return self

    def stop(self):
        if self._httpd is None:
            return
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
        self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def closed_port():
    """A 127.0.0.1 port with nothing listening (bound then closed: refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    with HttpTestServer() as srv:
        print(srv.url("/"), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
