#!/usr/bin/env python3
"""Stand-in for an OpenAI-compatible LLM server (vLLM / SGLang): no model is loaded, no GPU is used.

It speaks the same wire protocol as `vllm serve` so that judge clients, reward functions and services can be tested
here: /health (503 while starting, 200 when ready), /v1/models, /v1/chat/completions, /v1/completions, SSE streaming
(`data: {...}` chunks, then `data: [DONE]`), `usage`, OpenAI's error JSON, API keys (401), and injected faults
(429 with retry-after, 500, malformed JSON, dropped connections, slow answers) for the whole server, every Nth request,
one request (header `X-Standin-Fault: KIND`) or one prompt (marker `[[standin-fault:KIND]]` or `[[standin-fault:KINDxN]]`
in the prompt: the first N requests with that exact prompt fail, later ones succeed).

Answers are deterministic functions of the prompt, so tests can predict them:
- `--answers FILE`: rules (JSON list or JSON lines) `{"pattern": REGEX, "reply": TEXT}`; the first rule whose regex is found
  in the prompt (chat: message contents joined by newlines) answers, with `\\1` / `\\g<name>` expanded from the match.
- otherwise a judge heuristic: it finds the reference (a line starting `Reference`, `Ground truth`, `Gold`, `Expected`,
  `Correct answer`) and the response (`Response`, `Prediction`, `Predicted`, `Candidate`, `Model answer`, `Answer`,
  `Solution`) in the prompt and scores the share of the reference's words found in the response; >= 0.5 is correct
  (score 1, or the share times 10 rounded when the prompt asks for a grade from 0 to 10).
  It answers JSON `{"score": 1|0, "label": "correct"|"incorrect", "overlap": X}` when the prompt mentions JSON,
  `Yes`/`No` when it asks for yes or no, else `Score: 1|0` and `Label: correct|incorrect` lines. Without both parts
  the share is the prompt's SHA-256 modulo 11, divided by 10 (and it is the score).
"""
import argparse
import hashlib
import json
import os
import re
import signal
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = ("none", "401", "429", "500", "malformed", "drop", "slow")
FAULT_MARKER = re.compile(r"\[\[standin-fault:(none|401|429|500|malformed|drop|slow)(?:x(\d+))?\]\]")
REFERENCE = re.compile(r"^\s*(?:reference(?: answer| diagnosis)?|ground[ _-]?truth|gold(?: answer)?|expected(?: answer)?|correct answer)\s*[:：]\s*(.*)$", re.I | re.M)
RESPONSE = re.compile(r"^\s*(?:response|prediction|predicted(?: answer| diagnosis)?|candidate(?: answer)?|model answer|answer|solution)\s*[:：]\s*(.*)$", re.I | re.M)
WORD = re.compile(r"[a-z0-9]+")
TEN_POINT = re.compile(r"\b0\s*(?:\([^)]*\)\s*)?(?:-|to)\s*10\b", re.I)


def log(message):
    print(message, file=sys.stderr, flush=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="openai_server.py",
        description="STAND-IN for an OpenAI-compatible LLM server (vLLM/SGLang wire protocol). No model is loaded: "
        "answers are deterministic functions of the prompt. Unknown vLLM flags (-tp, --gpu-memory-utilization, ...) "
        "are accepted and ignored.",
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve MODEL (stand-in)", allow_abbrev=False, description="Serve MODEL: a STAND-IN, no model is loaded.",
                           epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("model", help="model name or path (only reported, never loaded)")
    serve.add_argument("--port", type=int, default=8000, help="port (0: any free port, printed in the log)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--served-model-name", nargs="+", default=None, help="names clients use (default: MODEL)")
    serve.add_argument("--api-key", default=os.environ.get("VLLM_API_KEY"), help="required bearer key (default: env VLLM_API_KEY)")
    serve.add_argument("--startup-seconds", type=float, default=0.0, help="/health answers 503 this long")
    serve.add_argument("--latency-ms", type=float, default=0.0, help="delay before each answer")
    serve.add_argument("--fault", choices=FAULTS, default="none", help="fault for every request (or every Nth with --fault-every)")
    serve.add_argument("--fault-every", type=int, default=0, help="apply --fault only to every Nth completion request")
    serve.add_argument("--retry-after", type=float, default=1.0, help="seconds in the retry-after header of a 429")
    serve.add_argument("--slow-seconds", type=float, default=30.0, help="delay of the `slow` fault")
    serve.add_argument("--answers", default=None, help="rules file: JSON list or JSON lines of {pattern, reply}")
    serve.add_argument("--max-model-len", type=int, default=32768)
    args, ignored = serve.parse_known_args(argv[1:]) if argv and argv[0] == "serve" else (parser.parse_args(argv), [])
    args.command = "serve"
    args.ignored = ignored
    return args


def load_rules(path):
    if not path:
        return []
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if text.lstrip().startswith("["):
        raw = json.loads(text)
    else:
        raw = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    raw.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise SystemExit(f"{path}:{number}: not JSON: {error}")
    rules = []
    for number, rule in enumerate(raw, 1):
        if not isinstance(rule, dict) or not isinstance(rule.get("pattern"), str) or not isinstance(rule.get("reply"), str):
            raise SystemExit(f"{path}: rule {number}: needs string fields pattern and reply")
        rules.append((re.compile(rule["pattern"], re.S), rule["reply"]))
    return rules


def words(text):
    return WORD.findall(text.lower())


def judge_answer(prompt):
    """The default heuristic judge (see the module doc)."""
    refs, resps = REFERENCE.findall(prompt), RESPONSE.findall(prompt)
    if refs and resps:
        ref, resp = set(words(refs[-1])), set(words(resps[-1]))
        overlap = len(ref & resp) / len(ref) if ref else 0.0
        score = 1 if overlap >= 0.5 else 0
        fraction = overlap
    else:
        overlap = None
        fraction = (int(hashlib.sha256(prompt.encode("utf-8")).hexdigest(), 16) % 11) / 10
        score = fraction
    passed = fraction >= 0.5
    if TEN_POINT.search(prompt):  # "from 0 to 10" / "0-10": grade on that scale
        score = round(fraction * 10)
    label = "correct" if passed else "incorrect"
    lower = prompt.lower()
    if "json" in lower:
        return json.dumps({"score": score, "label": label, "overlap": None if overlap is None else round(overlap, 3)})
    if re.search(r"\byes\b.{0,12}\bno\b", lower):
        return "Yes" if passed else "No"
    detail = "no reference/response pair found" if overlap is None else f"word overlap {overlap:.2f}"
    return f"Score: {score}\nLabel: {label}\nReason: {detail} (stand-in judge)."


class State:
    def __init__(self, args):
        self.args = args
        self.names = args.served_model_name or [args.model]
        self.rules = load_rules(args.answers)
        self.ready_at = time.monotonic() + args.startup_seconds
        self.lock = threading.Lock()
        self.count = 0
        self.marker_hits = {}

    def ready(self):
        return time.monotonic() >= self.ready_at

    def answer(self, prompt):
        for pattern, reply in self.rules:
            match = pattern.search(prompt)
            if match:
                return match.expand(reply)
        return judge_answer(prompt)

    def fault_for(self, header, prompt):
        """Header first, then a prompt marker (counted per exact prompt), then the server-wide fault."""
        with self.lock:
            self.count += 1
            count = self.count
            marker = FAULT_MARKER.search(prompt)
            if marker and marker.group(2) is not None:
                key = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
                hits = self.marker_hits[key] = self.marker_hits.get(key, 0) + 1
        if header in FAULTS:
            return header
        if marker:
            if marker.group(2) is None or hits <= int(marker.group(2)):
                return marker.group(1)
            return "none"
        every = self.args.fault_every
        if every <= 0 or count % every == 0:
            return self.args.fault
        return "none"


def prompt_of(body, chat):
    if chat:
        parts = []
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):  # content parts: keep the text ones
                content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
            if isinstance(content, str):
                parts.append(content)
        return "\n".join(parts)
    prompt = body.get("prompt", "")
    if isinstance(prompt, list):
        return "\n".join(p for p in prompt if isinstance(p, str))
    return prompt if isinstance(prompt, str) else ""


def shape(text, body):
    """Apply `stop` and `max_tokens` (whitespace words stand for tokens) and return (text, finish_reason)."""
    finish = "stop"
    stops = body.get("stop")
    for stop in [stops] if isinstance(stops, str) else (stops or []):
        if isinstance(stop, str) and stop and stop in text:
            text = text[: text.index(stop)]
    limit = body.get("max_tokens") or body.get("max_completion_tokens")
    pieces = re.findall(r"\S+\s*", text)
    if isinstance(limit, int) and 0 < limit < len(pieces):
        text, finish = "".join(pieces[:limit]), "length"
    return text, finish


def count_tokens(text):
    return len(text.split())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle's algorithm on, the body of an answer on a kept-alive connection
    # waits for the client's delayed ACK (40 ms). uvicorn (vLLM, SGLang) sets TCP_NODELAY, so the stand-in does too.
    disable_nagle_algorithm = True
    server_version = "medrl-standin-openai/1"
    state: State

    def log_message(self, fmt, *args):  # uvicorn-style access log on stderr
        log(f'INFO:     {self.client_address[0]}:{self.client_address[1]} - "{self.requestline}" {args[1] if len(args) > 1 else ""}')

    # --- plumbing -------------------------------------------------------------------------------------------------
    def send_json(self, status, payload, headers=None):
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def send_error_json(self, status, message, kind, headers=None):
        self.send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": status}}, headers)

    def drop(self):
        """Close the connection without an answer (a crashed or restarted server)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def read_body(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw or b"{}")

    def authorised(self):
        key = self.state.args.api_key
        return not key or self.headers.get("authorization", "") == f"Bearer {key}"

    # --- routes ---------------------------------------------------------------------------------------------------
    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path in ("/health", "/ping"):
            if self.state.ready():
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()
            else:
                self.send_error_json(503, "stand-in server is starting", "ServiceUnavailableError")
            return
        if path == "/version":
            self.send_json(200, {"version": "stand-in"})
            return
        if not self.gate():
            return
        if path == "/v1/models":
            now = int(time.time())
            self.send_json(200, {"object": "list", "data": [
                {"id": name, "object": "model", "created": now, "owned_by": "vllm", "root": self.state.args.model,
                 "parent": None, "max_model_len": self.state.args.max_model_len, "permission": []}
                for name in self.state.names]})
            return
        self.send_error_json(404, f"Not found: {path}", "NotFoundError")

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        try:
            body = self.read_body()
        except (ValueError, UnicodeDecodeError) as error:
            self.send_error_json(400, f"request body is not JSON: {error}", "BadRequestError")
            return
        if not self.gate():
            return
        if path not in ("/v1/chat/completions", "/v1/completions"):
            self.send_error_json(404, f"Not found: {path}", "NotFoundError")
            return
        if not isinstance(body, dict):
            self.send_error_json(400, "request body must be a JSON object", "BadRequestError")
            return
        model = body.get("model")
        if model not in self.state.names:
            self.send_error_json(404, f"The model `{model}` does not exist.", "NotFoundError")
            return
        chat = path == "/v1/chat/completions"
        if chat and not isinstance(body.get("messages"), list):
            self.send_error_json(400, "messages: a list is required", "BadRequestError")
            return
        prompt = prompt_of(body, chat)
        fault = self.state.fault_for(self.headers.get("x-standin-fault"), prompt)
        if self.state.args.latency_ms > 0:
            time.sleep(self.state.args.latency_ms / 1000)
        if fault == "401":
            self.send_error_json(401, "Unauthorized", "AuthenticationError")
            return
        if fault == "429":
            self.send_error_json(429, "Too many requests (stand-in fault)", "RateLimitError",
                                 {"retry-after": f"{self.state.args.retry_after:g}"})
            return
        if fault == "500":
            self.send_error_json(500, "Internal server error (stand-in fault)", "InternalServerError")
            return
        if fault == "drop":
            self.drop()
            return
        if fault == "slow":
            time.sleep(self.state.args.slow_seconds)
        text, finish = shape(self.state.answer(prompt), body)
        n = body.get("n") if isinstance(body.get("n"), int) and body.get("n") > 0 else 1
        usage = {"prompt_tokens": count_tokens(prompt), "completion_tokens": count_tokens(text) * n}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        ident = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex
        created = int(time.time())
        if fault == "malformed":
            data = b'{"id": "' + ident.encode() + b'", "object": "chat.completion", "choices": [{"index": 0, "mess'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if body.get("stream"):
            self.stream(ident, created, model, chat, text, finish, n, usage, body)
            return
        if chat:
            choices = [{"index": i, "message": {"role": "assistant", "content": text, "tool_calls": []},
                        "logprobs": None, "finish_reason": finish} for i in range(n)]
            obj = "chat.completion"
        else:
            choices = [{"index": i, "text": text, "logprobs": None, "finish_reason": finish} for i in range(n)]
            obj = "text_completion"
        self.send_json(200, {"id": ident, "object": obj, "created": created, "model": model, "choices": choices, "usage": usage})

    def gate(self):
        """503 while starting, 401 for a wrong key; True when the request may go on."""
        if not self.state.ready():
            self.send_error_json(503, "stand-in server is starting", "ServiceUnavailableError")
            return False
        if not self.authorised():
            self.send_error_json(401, "Incorrect API key provided.", "AuthenticationError")
            return False
        return True

    def stream(self, ident, created, model, chat, text, finish, n, usage, body):
        """SSE over chunked transfer encoding, like uvicorn: one chunk per word, then finish, usage and [DONE]."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        obj = "chat.completion.chunk" if chat else "text_completion"

        def event(payload):
            data = b"data: " + (payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")) + b"\n\n"
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def chunk(choices, extra=None):
            return {"id": ident, "object": obj, "created": created, "model": model, "choices": choices, **(extra or {})}

        pieces = re.findall(r"\s*\S+", text) or [""]
        for i in range(n):
            if chat:
                event(chunk([{"index": i, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}]))
            for piece in pieces:
                delta = {"content": piece} if chat else None
                choice = {"index": i, "delta": delta} if chat else {"index": i, "text": piece}
                event(chunk([{**choice, "logprobs": None, "finish_reason": None}]))
            last = {"index": i, "delta": {}} if chat else {"index": i, "text": ""}
            event(chunk([{**last, "logprobs": None, "finish_reason": finish}]))
        if (body.get("stream_options") or {}).get("include_usage"):
            event(chunk([], {"usage": usage}))
        event(b"[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def main(argv):
    args = parse_args(argv)
    log(f"openai_server.py: STAND-IN for an OpenAI-compatible server (vLLM/SGLang wire protocol); model {args.model} is not loaded")
    if args.ignored:
        log(f"INFO: stand-in ignores these flags: {' '.join(args.ignored)}")
    state = State(args)
    Handler.state = state
    ThreadingHTTPServer.request_queue_size = 256
    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    port = server.server_address[1]
    log(f"INFO:     stand-in listening on http://{args.host}:{port} (served model names: {', '.join(state.names)})")

    def announce():
        time.sleep(max(0.0, state.ready_at - time.monotonic()))
        log("INFO:     Application startup complete.")
        log(f"INFO:     Uvicorn running on http://{args.host}:{port} (Press CTRL+C to quit)")

    threading.Thread(target=announce, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        log("INFO:     Shutting down (stand-in)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
