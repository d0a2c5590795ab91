"""The open-loop load generator's ceiling on loopback (issue 19): nginx answering 200 "ok",
Debian's wrk at the same connection count beside `rpxprof run --rate`, one run, alternating.

    python3 bench/bench_http_load.py [--rpxprof build/rpxprof] [--connections 64] [--seconds 5]

wrk (closed loop, every connection sends its next request as soon as the answer comes) gives the
most requests per second the server and one client thread reach together. rpxprof is then run
open-loop at fractions of that rate, with each of its engines (`--load-engine sockets`, the
default for http://, and `curl`): a rate it keeps (achieved within 2 % of the requested, few
late sends) while timing every request is within its ceiling. nginx and wrk come from Debian
(`./scripts/setup.sh --with-bench`); nginx runs from a temporary folder on 127.0.0.1 and is
stopped by its PID."""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import machine_line  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nginx(tmp, port):
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{port};
        location / {{ return 200 "ok"; }}
    }}
}}
""")
    proc = subprocess.Popen(["nginx", "-c", conf, "-p", tmp], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("nginx did not start")


def wrk(url, connections, seconds):
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", url],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))


def rpxprof(binary, url, rate, connections, seconds, tmp, engine):
    out = os.path.join(tmp, "load.json")
    subprocess.run([binary, "run", "--model", url, "--method", "GET", "--rate", f"{rate:.0f}",
                    "--duration", str(seconds), "--concurrency", str(connections), "--warmup",
                    "10", "--load-engine", engine, "-q", "--output", out, "--force"], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        r = json.load(f)
    ld = r["http"]["load"]
    return {"rate": rate, "achieved": ld["achieved_rate_per_s"], "sent": ld["sent"],
            "completed": ld["completed"], "late": ld["late"], "dropped": ld["dropped"],
            "p50": r["latency"]["p50_ms"], "p99": r["latency"]["p99_ms"],
            "service_p50": ld["service_latency_ms"]["p50_ms"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rpxprof", default="build/rpxprof")
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--fractions", default="0.8,0.9,1.0")
    ap.add_argument("--engines", default="sockets,curl")
    a = ap.parse_args()
    for tool in ("nginx", "wrk"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found: apt-get install nginx-light wrk")
    print(machine_line())
    tmp = tempfile.mkdtemp(prefix="rpx-bench-http-")
    port = free_port()
    nginx = start_nginx(tmp, port)
    url = f"http://127.0.0.1:{port}/"
    try:
        kept = {}
        for engine in a.engines.split(","):
            fractions = [float(x) for x in a.fractions.split(",")]
            if engine == "curl":  # its ceiling is near half of wrk's: where it holds and not
                fractions = [0.3, 0.4, 0.5]
            for frac in fractions:
                # wrk right before each run: the machine's state moves between runs
                w = wrk(url, a.connections, a.seconds)
                row = rpxprof(a.rpxprof, url, w * frac, a.connections, a.seconds, tmp, engine)
                if row["achieved"] >= 0.98 * row["rate"] and row["dropped"] == 0:
                    kept[engine] = max(kept.get(engine, 0), row["achieved"] / w)
                print(f"wrk -t1 -c{a.connections} {w:.0f}/s, then rpxprof --load-engine "
                      f"{engine} --rate {row['rate']:.0f} ({frac:.2f} x wrk): achieved "
                      f"{row['achieved']:.0f}/s ({row['achieved'] / row['rate']:.3f}), sent "
                      f"{row['sent']}, late {row['late']} ({row['late'] / max(row['sent'], 1):.1%}), "
                      f"dropped {row['dropped']}, latency p50 {row['p50']:.3f} ms p99 "
                      f"{row['p99']:.3f} ms, service p50 {row['service_p50']:.3f} ms", flush=True)
        for engine, ratio in kept.items():
            print(f"{engine}: the highest rate kept (achieved >= 0.98 of requested, none "
                  f"dropped) = {ratio:.2f} x the requests/s of the wrk run just before")
    finally:
        nginx.send_signal(signal.SIGQUIT)
        try:
            nginx.wait(timeout=10)
        except subprocess.TimeoutExpired:
            nginx.kill()
            nginx.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
