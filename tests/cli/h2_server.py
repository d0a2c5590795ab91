"""A local HTTP/2 API for the HTTP target's --http2 tests: 127.0.0.1, a free port, its own
process (started by the test, stopped by its PID). Debian's python3-h2 (the protocol's state
machine) on an asyncio loop, so that the streams of one connection are served concurrently.

    with H2TestServer(tmp) as srv:                 # h2c: HTTP/2 over TCP, prior knowledge
        url = srv.url("/x?ms=5")
        ...
        srv.stats()  # {"connections", "streams", "max_open_streams", "protocol_errors",
                     #  "h1_requests"}

Every request (any path, any method; a body is read and dropped) is answered 200 "ok\\n" after
`ms` milliseconds (the query's ms=N, else --delay-ms), counted from the end of the request,
each stream on its own timer. `streams` counts the answered HTTP/2 streams, `max_open_streams`
the most requests one connection had open at once (above 1: multiplexed). Bytes that are not
HTTP/2 (an HTTP/1.1 request to this h2c server) are a protocol error: GOAWAY, connection
closed, counted in `protocol_errors`.

With --tls CERT KEY the server speaks TLS and offers the ALPN protocols of --alpn (default
h2); a connection that agreed to http/1.1 is answered in HTTP/1.1 (`h1_requests`), the same
way: a server that does not speak HTTP/2 over TLS.

    python3 h2_server.py [--delay-ms MS] [--tls CERT KEY] [--alpn h2,http/1.1] --stats FILE

prints the port on its first line, writes the counts to FILE after every change, and exits
after --lifetime seconds (default 600) if nobody stopped it."""
import argparse
import asyncio
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))


class Stats:
    def __init__(self, path):
        self.path = path
        self.c = {"connections": 0, "streams": 0, "max_open_streams": 0, "protocol_errors": 0,
                  "h1_requests": 0}
        self.save()

    def add(self, key, n=1):
        self.c[key] += n
        self.save()

    def peak(self, key, v):
        if v > self.c[key]:
            self.c[key] = v
            self.save()

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.c, f)
        os.replace(tmp, self.path)


def delay_of(path, default_ms):
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    try:
        return float(q["ms"][0]) / 1000.0
    except (KeyError, ValueError, IndexError):
        return default_ms / 1000.0


class Conn(asyncio.Protocol):
    def __init__(self, stats, delay_ms):
        self.stats, self.delay_ms = stats, delay_ms
        self.transport = self.h2 = None
        self.paths = {}          # open streams: stream id -> path
        self.h1_buf = b""
        self.closed = False

    def connection_made(self, transport):
        import h2.config
        import h2.connection
        self.transport = transport
        self.stats.add("connections")
        ssl_obj = transport.get_extra_info("ssl_object")
        if ssl_obj is not None and ssl_obj.selected_alpn_protocol() != "h2":
            return  # HTTP/1.1 over TLS
        self.h2 = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.h2.initiate_connection()
        transport.write(self.h2.data_to_send())

    def connection_lost(self, exc):
        self.closed = True

    def data_received(self, data):
        if self.h2 is None:
            self.h1_data(data)
            return
        import h2.events
        import h2.exceptions
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.stats.add("protocol_errors")
            self.transport.write(self.h2.data_to_send())
            self.transport.close()
            return
        for ev in events:
            if isinstance(ev, h2.events.RequestReceived):
                self.paths[ev.stream_id] = dict(ev.headers).get(":path", "/")
                self.stats.peak("max_open_streams", len(self.paths))
            elif isinstance(ev, h2.events.DataReceived):
                self.h2.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):  # the whole request is in
                path = self.paths.get(ev.stream_id, "/")
                asyncio.ensure_future(self.answer(ev.stream_id, delay_of(path, self.delay_ms)))
            elif isinstance(ev, h2.events.StreamReset):
                self.paths.pop(ev.stream_id, None)
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.transport.close()
        self.transport.write(self.h2.data_to_send())

    async def answer(self, stream_id, delay_s):
        await asyncio.sleep(delay_s)
        if self.closed or stream_id not in self.paths:
            return
        body = b"ok\n"
        self.h2.send_headers(stream_id, [(":status", "200"), ("content-type", "text/plain"),
                                         ("content-length", str(len(body)))])
        self.h2.send_data(stream_id, body, end_stream=True)
        del self.paths[stream_id]
        # counted before the answer leaves: a client that has it may read the counts at once
        self.stats.add("streams")
        self.transport.write(self.h2.data_to_send())

    def h1_data(self, data):
        """HTTP/1.1 keep-alive over TLS (a server that did not agree to h2)."""
        self.h1_buf += data
        while b"\r\n\r\n" in self.h1_buf:
            head, rest = self.h1_buf.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            length = 0
            for line in lines[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip())
            if len(rest) < length:
                return
            self.h1_buf = rest[length:]
            path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
            asyncio.ensure_future(self.h1_answer(delay_of(path, self.delay_ms)))

    async def h1_answer(self, delay_s):
        await asyncio.sleep(delay_s)
        if self.closed:
            return
        self.stats.add("h1_requests")  # before the answer leaves, as for streams
        self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: 3\r\n\r\nok\n")


async def serve(args):
    stats = Stats(args.stats)
    ctx = None
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls[0], args.tls[1])
        ctx.set_alpn_protocols(args.alpn.split(","))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Conn(stats, args.delay_ms), "127.0.0.1", 0,
                                      ssl=ctx)
    print(server.sockets[0].getsockname()[1], flush=True)
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))
    try:
        await asyncio.wait_for(stop, args.lifetime)
    except asyncio.TimeoutError:
        pass
    server.close()


class H2TestServer:
    """h2_server.py in a child process; a context manager (start/stop). `tmp`: a folder for
    its counts file."""

    def __init__(self, tmp, delay_ms=5, tls=None, alpn="h2", scheme=None):
        self.tmp, self.delay_ms, self.tls, self.alpn = tmp, delay_ms, tls, alpn
        self.scheme = scheme or ("https" if tls else "http")
        self.stats_path = os.path.join(tmp, f"h2stats-{id(self)}.json")
        self.proc = None
        self.port = None

    def start(self):
        cmd = ["/usr/bin/python3", os.path.join(HERE, "h2_server.py"), "--delay-ms",
               str(self.delay_ms), "--stats", self.stats_path, "--alpn", self.alpn]
        if self.tls:
            cmd += ["--tls", *self.tls]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     text=True)
        line = self.proc.stdout.readline()  # the port, once it listens
        if not line.strip().isdigit():
            self.stop()
            raise RuntimeError(f"h2_server.py did not start: {line!r}")
        self.port = int(line)
        return self

    def url(self, path="/"):
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def stats(self):
        with open(self.stats_path) as f:
            return json.load(f)

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc.stdout.close()
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay-ms", type=float, default=5.0)
    ap.add_argument("--stats", required=True)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--alpn", default="h2")
    ap.add_argument("--lifetime", type=float, default=600.0)
    args = ap.parse_args()
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
