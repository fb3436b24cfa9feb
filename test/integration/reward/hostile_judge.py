"""Calls configs/rewards/medrl_judge.py's ask_judge against a local judge that misbehaves as the case named in argv[1]
asks, and prints {"seconds", "calls", "answer"} or {"seconds", "calls", "error"} as JSON (for hostile-judge.test.ts)."""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "configs", "rewards"))
import medrl_judge  # noqa: E402

CASE = sys.argv[1]
ANSWER = json.dumps({"choices": [{"message": {"content": "Score: 1"}}]}).encode()
calls = []


class Judge(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        calls.append(time.monotonic())
        if CASE == "retry-after-hour":
            self.reply(429, b'{"error": {"message": "rate limited"}}', {"retry-after": "3600"})
        elif CASE == "unavailable-then-ok":
            self.reply(503, b"{}") if len(calls) < 3 else self.reply(200, ANSWER)
        elif CASE == "drip":
            # Headers at once, then a byte of body every 0.2 s: no single read ever waits long.
            self.send_response(200)
            self.send_header("content-length", "1000000")
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                return
        elif CASE == "huge-declared":
            self.send_response(200)
            self.send_header("content-length", str(64 << 20))
            self.end_headers()
            self.wfile.write(b"{" * 1024)
        elif CASE == "huge-streamed":
            self.send_response(200)
            self.end_headers()
            try:
                for _ in range(64):
                    self.wfile.write(b" " * (1 << 20))
            except OSError:
                return
        self.close_connection = True

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for k, v in dict(headers).items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = ThreadingHTTPServer(("127.0.0.1", 0), Judge)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
os.environ.update({"MEDRL_JUDGE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1", "MEDRL_JUDGE_MODEL": "judge"})
started = time.monotonic()
try:
    out = {"answer": medrl_judge.ask_judge("Patient Jane Roe, MRN 12345: is the diagnosis right?", timeout=1, deadline=3)}
except RuntimeError as error:  # what the rewards catch
    out = {"error": str(error)}
out.update(seconds=time.monotonic() - started, calls=len(calls))
print(json.dumps(out))
