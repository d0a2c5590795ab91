"""A queue whose capacity is known exactly, for the capacity search's tests: an HTTP/1.1
server on 127.0.0.1 with ONE worker and a fixed service time S, first come first served.

The worker is a schedule, not a sleep: request k (in the order the server read them) is
answered at finish_k = max(arrival_k, finish_{k-1}) + S on the monotonic clock, so the
server's own overhead (Python, a busy machine) never adds to S as long as it is below S
(a response is written late only when the loop itself was held up, and then the next ones
are still due at their own finish times). This is the D/D/1 queue of the tests:

  - constant arrivals at rate r < 1/S: each request finds the worker idle, latency = S (+ the
    loopback and the client);
  - r > 1/S: the queue grows by (S - 1/r) per request, request k waits k (S - 1/r).

So with an objective p99 < X (X well above S), the largest rate meeting it over a run of n
requests is 1/S up to the drift a queue can build within the run before the percentile's
upper bound (rank j of n) passes X: rate_max = 1 / (S - (X - S) / j). The tests state the
truth band [1/S, that] and never depend on the machine's speed.

Usage: capacity_server.py SERVICE_MS  (prints the port on stdout, serves until SIGTERM).
"""
import collections
import os
import selectors
import socket
import sys
import time


def main():
    service = float(sys.argv[1]) / 1e3
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(256)
    srv.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ, None)
    print(srv.getsockname()[1], flush=True)
    bufs = {}
    queue = collections.deque()  # (conn, finish time)
    last_finish = 0.0
    body = b"ok"
    resp = (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n"
            % len(body)) + body
    while True:
        timeout = None
        if queue:
            timeout = max(0.0, queue[0][1] - time.monotonic())
        for key, _ in sel.select(timeout):
            if key.data is None:
                try:
                    c, _ = srv.accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                bufs[c] = b""
                sel.register(c, selectors.EVENT_READ, "conn")
                continue
            c = key.fileobj
            try:
                data = c.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(c)
                bufs.pop(c, None)
                c.close()
                continue
            now = time.monotonic()
            bufs[c] += data
            while b"\r\n\r\n" in bufs[c]:  # requests without bodies (GET)
                _, bufs[c] = bufs[c].split(b"\r\n\r\n", 1)
                last_finish = max(now, last_finish) + service
                queue.append((c, last_finish))
        now = time.monotonic()
        while queue and queue[0][1] <= now:
            c, _ = queue.popleft()
            if c in bufs:
                try:
                    c.sendall(resp)
                except OSError:
                    pass


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        os._exit(0)
