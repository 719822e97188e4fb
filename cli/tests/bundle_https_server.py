"""A small https file server for the bundle tests: serves one folder over
TLS with the given certificate, answers If-None-Match with 304 when the
file's ETag (its sha256) matches, and prints one line per request
("GET /path STATUS") on stdout, after a first line "port N". Stops by
itself after --seconds, so a test that dies leaves nothing running."""

import argparse
import hashlib
import http.server
import os
import ssl
import sys
import threading


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--seconds", type=float, default=120)
    args = p.parse_args()
    root = os.path.abspath(args.dir)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = os.path.join(root, self.path.lstrip("/").split("?")[0])
            if not os.path.abspath(path).startswith(root + os.sep) or not os.path.isfile(path):
                return self.answer(404, b"no such file", None)
            with open(path, "rb") as f:
                body = f.read()
            etag = '"%s"' % hashlib.sha256(body).hexdigest()
            if self.headers.get("If-None-Match") == etag:
                return self.answer(304, b"", etag)
            self.answer(200, body, etag)

        def answer(self, status, body, etag):
            self.send_response(status)
            if etag:
                self.send_header("ETag", etag)
            if status != 304:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if status != 304:
                self.wfile.write(body)
            print("GET %s %d" % (self.path, status), flush=True)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print("port %d" % server.server_address[1], flush=True)
    threading.Timer(args.seconds, server.shutdown).start()
    server.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
