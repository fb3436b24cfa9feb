"""MedRL Studio reward worker: runs one reward function for many samples in one persistent python3 process.

Wire: the worker first writes MAGIC to stdout, then both directions carry frames: a 4-byte little-endian length and a
`marshal` (version 4) payload holding only plain data (None, bools, numbers, str, lists, dicts). marshal because it is
several times cheaper than JSON on both ends, and for a reward function taking microseconds the codec is the cost.
The function cannot touch the wire: requests are read from, and frames written to, private copies of stdin and stdout that
nothing it starts inherits. Its fd 0 is /dev/null (a subprocess reading stdin gets end of file, not our requests) and its
fds 1 and 2 are unlinked append-only files: prints, subprocesses (`subprocess.run`, `os.system`) and C code all write there,
and after every call what was written is read back as that sample's stdout/stderr (the first OUTPUT_CAP bytes of each).
The worker's own errors (faulthandler on a segfault, a bug here) go to the real stderr, which the host logs.
  first frame  {"path": FILE, "name": NAME|None, "env": {...}}   env (judge URL/model/key) is set before the file is loaded,
                                                                  so secrets never appear on a command line
  -> {"type": "loaded", "ok": True, "name", "kind": "verl"|"trl", "params", "required", "var_kw", "is_async"}
     (required: the parameters a caller must pass, without a default; var_kw: it takes **kwargs)
     or {"type": "loaded", "ok": False, "error", "traceback"} (the worker stays up; it retries when the file changes)
  {"type": "run", "id": N, "from": K, "timeout": SECONDS, "careful": bool, "columns": {"data_source": [...],
   "solution_str": [...], "ground_truth": [...], "extra_info": [...], "prompt"?: [...], "extra"?: [...]}}
  The host streams one batch as several `run` frames (from = 0, then the next index, ...) without waiting, so this process
  scores one part while the host encodes the next and decodes the last; parts are scored in the order they came.
  -> a "loaded" frame first when a batch starts (from = 0) and the file changed since the last load (mtime), then the
     part's results in order, in one or more frames (at least every FLUSH_S; after every sample when `careful`):
     {"id": N, "from": K, "score": [float|None], "detail": [dict|None], "seconds": [float],
      "notes": [[k, error|None, traceback|None, stdout, stderr], ...]}   (notes only for the samples that have any)
verl functions are called by keyword: compute_score(data_source, solution_str, ground_truth, extra_info, **extras they accept);
TRL functions as f(prompts=[p], completions=[c], **columns as one-element lists) -> [float|None], one sample per call so
every score, print and error belongs to one sample. A call that runs past the timeout is interrupted (SIGALRM).
"""
import faulthandler
import importlib.util
import inspect
import io
import marshal
import math
import os
import signal
import sys
import tempfile
import time
import traceback

MAGIC = b"MEDRL-REWARD-WORKER-1\n"
# Per sample and stream: what is kept of a function's output (a frame carries up to a part's worth of samples).
OUTPUT_CAP = 64 << 10

# os.dup makes non-inheritable descriptors: a subprocess of the function gets none of these three.
REQUESTS = os.fdopen(os.dup(0), "rb")
PROTOCOL = os.fdopen(os.dup(1), "wb", buffering=1 << 16)
DIAG = os.fdopen(os.dup(2), "w", buffering=1)
faulthandler.enable(DIAG)
sys.excepthook = lambda kind, value, tb: traceback.print_exception(kind, value, tb, file=DIAG)
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)


class Capture:
    """Descriptor `fd` (1 or 2) as an unlinked append-only file: whoever writes to it (print, a subprocess that inherited it,
    C code) appends, so its size says whether a call wrote anything (one lseek) and the bytes are read back in order."""

    def __init__(self, fd):
        self.fd = fd
        self.reader, path = tempfile.mkstemp(prefix="medrl-reward-output-")
        try:
            append = os.open(path, os.O_WRONLY | os.O_APPEND)
        finally:
            os.unlink(path)
        os.dup2(append, fd)
        os.close(append)
        self.text = io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True)

    def drain(self, size):
        """The `size` bytes written since the last drain, as text (the first OUTPUT_CAP of them), and empties the file."""
        data = os.pread(self.reader, min(size, OUTPUT_CAP), 0)
        os.ftruncate(self.reader, 0)
        text = data.decode("utf-8", "replace")
        return text if size <= OUTPUT_CAP else f"{text}\n[medrl: {size - OUTPUT_CAP} more bytes of output not kept]\n"


OUT, ERR = Capture(1), Capture(2)
sys.stdout, sys.stderr = OUT.text, ERR.text


def send(obj):
    payload = marshal.dumps(obj, 4)
    PROTOCOL.write(len(payload).to_bytes(4, "little"))
    PROTOCOL.write(payload)


def receive():
    head = REQUESTS.read(4)
    if len(head) < 4:
        return None
    size = int.from_bytes(head, "little")
    payload = REQUESTS.read(size)
    if len(payload) < size:
        return None
    return marshal.loads(payload)


FLUSH_S = 0.02


class CallTimeout(BaseException):
    """BaseException, so a reward function's `except Exception` cannot swallow it."""


# The running call's deadline (perf_counter seconds) or None between calls. A one-element list, not a class attribute:
# assigning a class attribute invalidates CPython's type caches, which costs a microsecond-scale call dearly.
DEADLINE = [None]


def _alarm(signum, frame):
    deadline = DEADLINE[0]
    if deadline is not None and time.perf_counter() > deadline:
        DEADLINE[0] = None
        raise CallTimeout()


def start_clock(timeout):
    """One periodic alarm per part instead of two timer syscalls per call: it fires every tick and interrupts only a call
    that has run past its deadline."""
    if timeout:
        tick = min(max(timeout / 20, 0.005), 0.5)
        signal.setitimer(signal.ITIMER_REAL, tick, tick)


def stop_clock():
    DEADLINE[0] = None
    signal.setitimer(signal.ITIMER_REAL, 0)


signal.signal(signal.SIGALRM, _alarm)


class Function:
    def __init__(self, path, name):
        self.path, self.wanted, self.fn, self.error, self.mtime, self.generation = path, name, None, None, None, 0

    def current_mtime(self):
        try:
            return os.stat(self.path).st_mtime_ns
        except OSError:
            return None

    def load(self):
        """(Re)imports the file; returns the `loaded` message."""
        self.mtime = self.current_mtime()
        self.generation += 1
        self.fn, self.error = None, None
        try:
            # The function's folder, then the working directory (the training code checkout on a host), like a script run there.
            for folder in (os.getcwd(), os.path.dirname(os.path.abspath(self.path))):
                if folder not in sys.path:
                    sys.path.insert(0, folder)
            spec = importlib.util.spec_from_file_location(f"medrl_reward_{self.generation}", self.path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot import {self.path}")
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            finally:
                # What the module printed while loading is no sample's: stdout is dropped, stderr goes to the host's log.
                OUT.drain(os.lseek(1, 0, os.SEEK_END))
                DIAG.write(ERR.drain(os.lseek(2, 0, os.SEEK_END)))
            self.fn, self.name = pick(module, self.wanted, self.path)
            self.kind = kind_of(self.fn)
            if self.kind is None:
                raise TypeError(f"{self.name} is neither a verl reward function (data_source, solution_str, ground_truth, extra_info=None, **kwargs) "
                                f"nor a TRL one (prompts, completions, **kwargs)")
            sig = inspect.signature(self.fn)
            self.params = list(sig.parameters)
            self.var_kw = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
            self.is_async = inspect.iscoroutinefunction(self.fn)
            required = [n for n, p in sig.parameters.items() if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            return {"type": "loaded", "ok": True, "name": self.name, "kind": self.kind, "params": self.params, "required": required,
                    "var_kw": self.var_kw, "is_async": self.is_async}
        except BaseException as error:  # SyntaxError, ImportError, SystemExit in module code: reported, never fatal
            self.fn, self.error = None, f"cannot load {self.path}: {type(error).__name__}: {error}"
            return {"type": "loaded", "ok": False, "error": self.error, "traceback": traceback.format_exc()}

    def invoker(self, columns):
        """A function of the sample's index in `columns` that calls the reward function and returns its raw value (a TRL
        function's one value); None for the common case, a verl function and the four standard columns, which the loop
        calls directly (one Python frame less per call)."""
        fn = self.fn
        ds, sol, gt, info = columns["data_source"], columns["solution_str"], columns["ground_truth"], columns["extra_info"]
        extra, prompt = columns.get("extra"), columns.get("prompt")
        if self.kind == "verl" and not self.is_async and extra is None:
            return None
        if self.kind == "verl":
            def verl(k):
                args = {"data_source": ds[k], "solution_str": sol[k], "ground_truth": gt[k], "extra_info": info[k]}
                for key, value in ((extra and extra[k]) or {}).items():
                    if key not in args and (self.var_kw or key in self.params):
                        args[key] = value
                result = fn(**args)
                return run_async(result) if inspect.isawaitable(result) else result
            return verl

        def trl(k):
            p = prompt[k] if prompt else None
            chat = isinstance(p, list)
            args = {"completions": [[{"role": "assistant", "content": sol[k]}] if chat else sol[k]]}
            if "prompts" in self.params or self.var_kw:
                args["prompts"] = [p if p is not None else ""]
            cols = {"ground_truth": gt[k], "data_source": ds[k], "extra_info": info[k]}
            cols.update((extra and extra[k]) or {})
            for key, value in cols.items():
                if key not in args and (self.var_kw or key in self.params):
                    args[key] = [value]
            result = fn(**args)
            if inspect.isawaitable(result):
                result = run_async(result)
            if not isinstance(result, (list, tuple)) or len(result) != 1:
                raise TypeError(f"returned {type(result).__name__} {result!r:.80}: a TRL reward function returns a list with one value per completion")
            return result[0]
        return trl


def kind_of(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    if "solution_str" in params and ("ground_truth" in params or var_kw):
        return "verl"
    if "completions" in params:
        return "trl"
    return None


def pick(module, wanted, path):
    if wanted:
        fn = getattr(module, wanted, None)
        if not callable(fn):
            raise AttributeError(f"{path} has no function {wanted}")
        return fn, wanted
    if callable(getattr(module, "compute_score", None)):
        return module.compute_score, "compute_score"
    found = [n for n, f in vars(module).items() if inspect.isfunction(f) and f.__module__ == module.__name__ and kind_of(f)]
    if len(found) == 1:
        return getattr(module, found[0]), found[0]
    raise AttributeError(f"{path}: name the function (FILE.py:NAME); reward functions found: {', '.join(found) or 'none'}")


def to_score(value):
    """A returned value -> (score, detail) or raises TypeError saying what was wrong."""
    detail = None
    if isinstance(value, dict):
        if "score" not in value:
            raise TypeError(f"returned a dict without 'score' (keys: {', '.join(map(str, value)) or 'none'})")
        detail, value = value, value["score"]
    if isinstance(value, (str, bytes, list, tuple, dict)) or value is None or not hasattr(value, "__float__"):
        raise TypeError(f"returned {type(value).__name__} {value!r:.80}: a reward is a number, a bool or a dict with 'score'")
    score = float(value)
    if not math.isfinite(score):
        raise TypeError(f"returned a non-finite score ({score})")
    return score, detail


async def _awaited(awaitable):
    return await awaitable


def run_async(awaitable):
    import asyncio  # only for async functions: importing it costs a cold start 40 ms

    return asyncio.run(_awaited(awaitable))


# NumPy arrays up to this many elements come back as lists; larger ones as their (abridged) repr.
MAX_ARRAY_ITEMS = 1000


def plain(value):
    """A returned detail value as data marshal can carry (what JSON would make of it; anything else as its repr).
    NumPy scalars and small arrays become numbers and lists: marshal would send them as their raw bytes."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value).__module__ == "numpy" and hasattr(value, "tolist") and getattr(value, "size", 1) <= MAX_ARRAY_ITEMS:
        return plain(value.tolist())
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    return repr(value)


def send_results(frame):
    # Every detail goes through plain(): marshal sends what has the buffer protocol (NumPy scalars) as bytes, unasked.
    frame["detail"] = [d if d is None else plain(d) for d in frame["detail"]]
    send(frame)


def run_part(fn, request):
    """Scores one `run` frame's samples, sending their results."""
    rid, first, timeout = request["id"], request["from"], request.get("timeout") or 0
    columns = request["columns"]
    n = len(columns["solution_str"])
    flush_s = 0 if request.get("careful") else FLUSH_S
    if fn.fn is None:
        notes = [[k, fn.error, None, "", ""] for k in range(n)]
        send({"id": rid, "from": first, "score": [None] * n, "detail": [None] * n, "seconds": [0.0] * n, "notes": notes})
        return
    invoke, call = fn.invoker(columns), fn.fn
    ds, sol, gt, info = columns["data_source"], columns["solution_str"], columns["ground_truth"], columns["extra_info"]
    perf, isfinite, lseek, END = time.perf_counter, math.isfinite, os.lseek, os.SEEK_END
    scores, details, seconds, notes = [], [], [], []
    sent = 0
    start_clock(timeout)
    try:
        started = last_flush = perf()
        for k in range(n):
            score = detail = None
            try:
                if timeout:
                    DEADLINE[0] = started + timeout
                if invoke is None:
                    value = call(data_source=ds[k], solution_str=sol[k], ground_truth=gt[k], extra_info=info[k])
                else:
                    value = invoke(k)
                kind = type(value)
                if kind is dict and type(score := value.get("score")) is float and isfinite(score):
                    detail = value
                elif kind is float and isfinite(value):
                    score = value
                elif value is None and fn.kind == "trl":
                    pass  # TRL: no reward for this sample
                else:
                    score = None
                    if inspect.isawaitable(value):
                        value = run_async(value)
                    score, detail = to_score(value)
                note = None
            except CallTimeout:
                note = [f"timed out after {timeout:g} s", traceback.format_exc()]
            except Exception as exc:
                note = [f"{type(exc).__name__}: {exc}", traceback.format_exc()]
            except SystemExit as exc:
                note = [f"called exit({exc.code})", traceback.format_exc()]
            finally:
                DEADLINE[0] = None
            ended = perf()
            scores.append(score)
            details.append(detail)
            seconds.append(ended - started)
            out, err = lseek(1, 0, END), lseek(2, 0, END)
            if note or out or err:
                notes.append([k - sent] + (note or [None, None]) + [OUT.drain(out) if out else "", ERR.drain(err) if err else ""])
            if ended - last_flush >= flush_s:
                send_results({"id": rid, "from": first + sent, "score": scores, "detail": details, "seconds": seconds, "notes": notes})
                PROTOCOL.flush()
                sent, last_flush = k + 1, ended
                scores, details, seconds, notes = [], [], [], []
            started = ended
    finally:
        stop_clock()
    if scores:
        send_results({"id": rid, "from": first + sent, "score": scores, "detail": details, "seconds": seconds, "notes": notes})


def main():
    PROTOCOL.write(MAGIC)
    setup = receive()
    if setup is None:
        return
    os.environ.update({str(k): str(v) for k, v in (setup.get("env") or {}).items()})
    fn = Function(setup["path"], setup.get("name"))
    send(fn.load())
    PROTOCOL.flush()
    while True:
        request = receive()
        if request is None:
            return
        if request.get("type") != "run":
            continue
        if request["from"] == 0 and fn.current_mtime() != fn.mtime:
            send(fn.load())
        run_part(fn, request)
        PROTOCOL.flush()


if __name__ == "__main__":
    main()
