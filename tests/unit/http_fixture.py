#!/usr/bin/env python3
"""http_fixture.py - the loopback server behind tests/unit/test_http.c.

Two listeners make "another host" real for the token rules: "hub" on
127.0.0.1 and "cdn" on 127.0.0.2 (Linux routes all of 127/8 to loopback),
each on a free port, written as "<hub> <cdn>\\n" to --ports-file once both
listen.  Each path is one server behaviour the client must survive (a Range
ignored, a body cut short, a stall, redirects to another host, to file://,
in a loop...).  Every request is logged as one JSON line to --log *before*
it is answered, so the test can read the line as soon as its request
returns; whether an Authorization header arrived is logged, never its value.
Standard library only; binds nothing but 127.0.0.1 and 127.0.0.2.
"""
import argparse
import json
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SIZE = 200000
DATA = bytes((i * 7 + (i >> 8)) & 0xFF for i in range(SIZE))
COMMIT = "0123456789abcdef0123456789abcdef01234567"
SHA256 = "ab" * 32

log_lock = threading.Lock()
log_file = None
ports = {}


def parse_range(value):
    """(start, end) of "bytes=a-b" / "bytes=a-", else None."""
    if not value or not value.startswith("bytes="):
        return None
    a, _, b = value[6:].partition("-")
    if not a.isdigit() or (b and not b.isdigit()):
        return None
    return int(a), (int(b) if b else None)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so connection reuse shows
    listener = "?"

    def log_message(self, *args):
        pass

    def log_request_line(self):
        path = self.path.split("?", 1)[0]
        rec = {
            "listener": self.listener,
            "method": self.command,
            "path": path,
            "range": self.headers.get("Range"),
            "auth": "Authorization" in self.headers,
            "client_port": self.client_address[1],
        }
        with log_lock:
            log_file.write(json.dumps(rec) + "\n")
            log_file.flush()

    def send(self, status, body=b"", headers=(), length=True):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)

    def redirect(self, status, location, extra=()):
        self.send(status, b"redirecting\n", [("Location", location)] + list(extra))

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        self.log_request_line()
        path = self.path.split("?", 1)[0]
        cdn = "http://127.0.0.2:%d" % ports["cdn"]
        try:
            self.route(path, cdn)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def route(self, path, cdn):
        rng = parse_range(self.headers.get("Range"))
        if path == "/data":
            if rng is None:
                self.send(200, DATA, [("ETag", '"%s"' % ("e" * 40)), ("Accept-Ranges", "bytes")])
                return
            a, b = rng
            if a >= SIZE:
                self.send(416, b"", [("Content-Range", "bytes */%d" % SIZE)])
                return
            b = SIZE - 1 if b is None or b >= SIZE else b
            self.send(206, DATA[a:b + 1], [("Content-Range", "bytes %d-%d/%d" % (a, b, SIZE))])
        elif path == "/ignore-range":
            self.send(200, DATA)
        elif path == "/wrong-start":
            self.send(206, DATA[0:100], [("Content-Range", "bytes 0-99/%d" % SIZE)])
        elif path == "/truncated":
            # announce everything, send 1000 bytes, close
            self.send_response(200)
            self.send_header("Content-Length", str(SIZE))
            self.end_headers()
            self.wfile.write(DATA[:1000])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            self.close_connection = True
        elif path == "/partial-206":
            # a 206 whose body ends at the close, short of its Content-Range
            self.send_response(206)
            self.send_header("Content-Range", "bytes 0-999/%d" % SIZE)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(DATA[:500])
            self.wfile.flush()
            self.close_connection = True
        elif path == "/stall":
            self.send_response(200)
            self.send_header("Content-Length", str(SIZE))
            self.end_headers()
            self.wfile.write(DATA[:100])
            self.wfile.flush()
            # a byte every 0.2 s, for 10 s at most: the client gives up first
            for i in range(50):
                time.sleep(0.2)
                self.wfile.write(DATA[100 + i:101 + i])
                self.wfile.flush()
            self.close_connection = True
        elif path == "/big":
            self.send(200, DATA + DATA, [("Content-Type", "application/json")])
        elif path == "/big-chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for off in range(0, SIZE, 16384):
                chunk = DATA[off:off + 16384]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/json":
            self.send(200, b'{"sha": "%s"}' % COMMIT.encode(),
                      [("Content-Type", "application/json")])
        elif path == "/headers":
            self.send(404, b'{"error": "Entry not found"}', [
                ("Content-Type", "application/json; charset=utf-8"),
                ("X-Error-Code", "EntryNotFound"),
                ("X-Error-Message", "Entry not found\tfor config.json"),
                ("X-Repo-Commit", COMMIT),
                ("ETag", 'W/"%s"' % ("f" * 40)),
                ("Retry-After", "7"),
                ("Link", '<http://127.0.0.1:%d/api/tree?cursor=abc>; rel="next"' % ports["hub"]),
            ])
        elif path == "/link-relative":
            self.send(200, b"[]", [("Link", '<https://x.example/a>; rel="prev", </api/page2?c=1>; rel=next')])
        elif path == "/interim":
            # an interim response whose headers must not survive into the final one
            self.wfile.write(b"HTTP/1.1 103 Early Hints\r\nX-Error-Code: Early\r\n"
                             b"X-Linked-Size: 5\r\n\r\n")
            self.send(200, b"final", [("X-Repo-Commit", COMMIT)])
        elif path == "/redirect-same":
            self.redirect(302, "/data")
        elif path == "/redirect-cross":
            self.redirect(302, cdn + "/data?X-Amz-Signature=SECRETSIG", [
                ("X-Repo-Commit", COMMIT),
                ("X-Linked-Etag", '"%s"' % SHA256),
                ("X-Linked-Size", str(SIZE)),
            ])
        elif path == "/hub-lfs":
            self.redirect(307, "/hub-lfs-2")
        elif path == "/hub-lfs-2":
            self.redirect(302, cdn + "/data?Expires=1&Signature=SECRETSIG", [
                ("X-Repo-Commit", COMMIT),
                ("X-Linked-Etag", '"%s"' % SHA256),
                ("X-Linked-Size", str(SIZE)),
            ])
        elif path == "/back-to-hub":
            # cdn -> hub: the token, once dropped, must stay dropped
            self.redirect(302, "http://127.0.0.1:%d/data" % ports["hub"])
        elif path == "/via-cdn":
            self.redirect(302, cdn + "/back-to-hub")
        elif path == "/redirect-file":
            self.redirect(302, "file:///etc/passwd")
        elif path == "/redirect-ftp":
            self.redirect(302, "ftp://127.0.0.1/x")
        elif path == "/loop":
            self.redirect(302, "/loop")
        else:
            self.send(404, b"no such fixture\n")


def serve(host, name):
    handler = type("H_" + name, (Handler,), {"listener": name})
    srv = ThreadingHTTPServer((host, 0), handler)
    srv.daemon_threads = True
    ports[name] = srv.server_address[1]
    return srv


def main():
    global log_file
    ap = argparse.ArgumentParser()
    ap.add_argument("--ports-file", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    log_file = open(args.log, "a", encoding="utf-8")
    servers = [serve("127.0.0.1", "hub"), serve("127.0.0.2", "cdn")]
    for srv in servers:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    tmp = args.ports_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d %d\n" % (ports["hub"], ports["cdn"]))
    os.replace(tmp, args.ports_file)  # the test never sees half a line
    # the test kills us; this bounds a leaked server's life anyway
    time.sleep(300)


if __name__ == "__main__":
    main()
