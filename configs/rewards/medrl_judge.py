"""Calls the LLM judge MedRL Studio points a reward function at (python3 stdlib only, so it runs in any training env).

The judge is an OpenAI-compatible server (vLLM, SGLang): MEDRL_JUDGE_URL (base URL ending in /v1), MEDRL_JUDGE_MODEL
(served model name) and MEDRL_JUDGE_API_KEY come from the environment: the playground and `medrl reward run --judge`
set them; in training, export them in the job's environment instead of hard-coding a URL in the reward file.
"""
import email.utils
import http.client
import json
import os
import random
import re
import socket
import threading
import time
import urllib.parse

# The same bounds as MedRL's own judge client (src/core/judge/judge-client.ts), so a stalled or hostile judge cannot hold
# a training step: each attempt ends within TIMEOUT_S (its body included), each call within its deadline.
TIMEOUT_S = 60
MAX_RESPONSE_BYTES = 4 << 20
MAX_RETRY_AFTER_S = 60
ATTEMPTS = 5
BASE_DELAY_S, MAX_DELAY_S = 0.5, 8.0
DEADLINE_S = 180


def judge_settings():
    url, model = os.environ.get("MEDRL_JUDGE_URL"), os.environ.get("MEDRL_JUDGE_MODEL")
    for name, value in (("MEDRL_JUDGE_URL", url), ("MEDRL_JUDGE_MODEL", model)):
        if not value:
            raise RuntimeError(f"{name} is not set: pick a judge in the playground (or --judge NAME), give the run a judge "
                               f"(medrl.yaml judges / the spec's services), or export MEDRL_JUDGE_URL and MEDRL_JUDGE_MODEL")
    # A judge without --api-key accepts any bearer token; "EMPTY" is the OpenAI client's convention for that.
    return url.rstrip("/"), model, os.environ.get("MEDRL_JUDGE_API_KEY") or "EMPTY"


class _Retry(Exception):
    """A failed attempt worth another (after `after` seconds when the server said so); its message is the failure's."""

    def __init__(self, message, after=None):
        super().__init__(message)
        self.after = after


def ask_judge(prompt, max_tokens=512, attempts=ATTEMPTS, timeout=TIMEOUT_S, deadline=DEADLINE_S):
    """The judge's answer to one user message (temperature 0, seed 42). Retries 408, 429, 5xx, dropped connections,
    timeouts and malformed answers with backoff (or what Retry-After says, up to MAX_RETRY_AFTER_S). Each attempt ends
    within `timeout` seconds, body included; the call within `deadline` seconds. Raises RuntimeError saying which judge
    failed and how (`judge HTTP N from URL: ...`, `judge request failed (URL): ...`, `judge answer refused (URL): ...`),
    never the prompt."""
    url, model, key = judge_settings()
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0, "seed": 42,
                       "max_tokens": max_tokens}).encode("utf-8")
    ends = time.monotonic() + deadline
    for attempt in range(1, attempts + 1):
        after = f" (after {attempt} attempts)" if attempt > 1 else ""
        budget = min(timeout, ends - time.monotonic())
        try:
            return _attempt(url, key, body, budget)
        except _Retry as failure:
            if budget < timeout and time.monotonic() >= ends - 0.01:
                raise RuntimeError(f"judge request failed ({url}): stopped, the call's {deadline:g} s deadline passed while "
                                   f"the judge was answering{after}") from None
            if attempt == attempts:
                raise RuntimeError(f"{failure}{after}") from None
            if failure.after is not None and failure.after > MAX_RETRY_AFTER_S:
                raise RuntimeError(f"{failure}; the judge asked to retry after {failure.after:g} s (Retry-After), longer than "
                                   f"the {MAX_RETRY_AFTER_S} s MedRL waits: not retried{after}") from None
            backoff = min(MAX_DELAY_S, BASE_DELAY_S * 2 ** (attempt - 1)) * (0.75 + random.random() * 0.5)
            wait = backoff if failure.after is None else failure.after
            if time.monotonic() + wait >= ends:
                raise RuntimeError(f"{failure}; not retried: the call's {deadline:g} s deadline comes first{after}") from None
            time.sleep(wait)
        except _Refused as refused:
            raise RuntimeError(f"{refused}{after}") from None
    raise AssertionError("unreachable: the last attempt returns or raises")


class _Refused(Exception):
    """A failed attempt not worth another (its message is the failure's)."""


def _attempt(url, key, body, budget):
    """One request, over within `budget` seconds: a watchdog shuts the socket then, however slowly the server drips."""
    parts = urllib.parse.urlsplit(f"{url}/chat/completions")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname, parts.port, timeout=max(budget, 0.01))
    expired = threading.Event()
    # The socket itself: the connection lets go of it once the response says the server will close.
    opened = []

    def expire():
        expired.set()
        for sock in opened:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # closed already: the attempt ended as the watchdog fired

    watchdog = threading.Timer(max(budget, 0.01), expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.connect()
        opened.append(conn.sock)
        conn.request("POST", parts.path + (f"?{parts.query}" if parts.query else ""), body=body,
                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
        response = conn.getresponse()
        data = _read_capped(response, url)
        if expired.is_set():
            raise TimeoutError
        if response.length:  # the server closed before the Content-Length it announced
            raise http.client.IncompleteRead(data, response.length)
    except (OSError, http.client.HTTPException) as error:
        if expired.is_set() or isinstance(error, TimeoutError):
            raise _Retry(f"judge request failed ({url}): no complete answer within {budget:g} s") from None
        raise _Retry(f"judge request failed ({url}): {type(error).__name__}: {error}") from None
    finally:
        watchdog.cancel()
        conn.close()
    if response.status != 200:
        message = f"judge HTTP {response.status} from {url}{_error_message(data)}"
        if response.status in (401, 403):
            raise _Refused(f"{message} (check MEDRL_JUDGE_API_KEY)")
        if response.status in (408, 429) or response.status >= 500:
            raise _Retry(message, _retry_after(response.headers))
        raise _Refused(message)
    try:
        content = json.loads(data)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise _Retry(f"judge request failed ({url}): malformed answer ({type(error).__name__}: {error})") from None
    if not isinstance(content, str):
        raise _Retry(f"judge request failed ({url}): malformed answer (choices[0].message.content is not text)")
    return content


def _read_capped(response, url):
    """The body, refused (not retried) once it passes MAX_RESPONSE_BYTES: announced or while it streams in."""
    limit = f"{MAX_RESPONSE_BYTES >> 20} MiB"
    declared = response.getheader("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
        raise _Refused(f"judge answer refused ({url}): it is {int(declared) / (1 << 20):.1f} MiB (Content-Length), over the "
                       f"{limit} limit; not read")
    chunks, size = [], 0
    while True:
        chunk = response.read1(1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise _Refused(f"judge answer refused ({url}): it passed the {limit} limit while streaming; the rest not read")
        chunks.append(chunk)


def _error_message(data):
    """OpenAI's error JSON's message, cut short (never a whole body)."""
    try:
        message = json.loads(data)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return ""
    return f": {str(message)[:200]}"


def _retry_after(headers):
    """Seconds the server asked to wait (retry-after-ms, retry-after in seconds or as a date), or None."""
    ms = headers.get("retry-after-ms")
    if ms and re.fullmatch(r"\d+(\.\d+)?", ms):
        return float(ms) / 1000
    value = headers.get("retry-after")
    if not value:
        return None
    if re.fullmatch(r"\d+(\.\d+)?", value.strip()):
        return float(value)
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def json_score(answer, field="score"):
    """The numeric `field` of the first JSON object in a judge answer, else the number after "score", else None."""
    match = re.search(r"\{.*?\}", answer, re.S)
    if match:
        try:
            value = json.loads(match.group(0)).get(field)
            return float(value) if value is not None else None
        except (ValueError, AttributeError, TypeError):
            pass
    match = re.search(r"score\s*[:=]?\s*(-?\d+(?:\.\d+)?)", answer, re.I)
    return float(match.group(1)) if match else None
