#!/usr/bin/env python3
"""The S3 bench's like-for-like reference: an HTTP/1.1 server on the host end of the server's TAP that keeps
what is PUT and serves it back on GET, so the guest's curl can time the same requests against the host
kernel's TCP as against the store's (guest/bench/s3-vs-tap.sh). Keep-alive, no Nagle delay, 100-continue
answered (all from the standard library). Usage: host-http.py ADDRESS PORT
"""
import http.server
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and Expect: 100-continue answered
    disable_nagle_algorithm = True
    objects = {}

    def do_PUT(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.objects[self.path] = self.rfile.read(n)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        body = self.objects.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        pass


if __name__ == "__main__":
    http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Handler).serve_forever()
