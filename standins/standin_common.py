"""Shared pieces of MedRL Studio's stand-in trainers (verl, TRL): knobs, data, reward functions, fake responses.

Stand-ins run where the real trainers cannot (no GPU, no model weights): python3 standard library only.
Knobs (environment variables):
  MEDRL_STANDIN_STEP_SECONDS   seconds per training step (default 0.3)
  MEDRL_STANDIN_STEPS          number of training steps (default: from the data, batch size and epochs, at most 20)
  MEDRL_STANDIN_CRASH_AT_STEP  raise an error at this step and exit with MEDRL_STANDIN_EXIT_CODE (default 1)
  MEDRL_STANDIN_HANG_AT_STEP   stop making progress at this step (sleep until killed)
  MEDRL_STANDIN_SEED           random seed (default 0)
"""
import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import random
import sys
import time

BUILTIN_PROMPTS = [
    ("Does aspirin reduce the risk of a first myocardial infarction in adults over 70?", "maybe"),
    ("Is metformin associated with lower all-cause mortality in type 2 diabetes compared with sulfonylureas?", "yes"),
    ("Does early mobilisation after hip fracture surgery reduce 30-day mortality?", "yes"),
    ("Is routine antibiotic prophylaxis effective in preventing infection after clean hand surgery?", "no"),
    ("Does vitamin D supplementation reduce the incidence of upper respiratory tract infections?", "maybe"),
    ("Is a normal D-dimer sufficient to exclude pulmonary embolism in low-risk patients?", "yes"),
    ("Does tight glycaemic control in the ICU reduce mortality?", "no"),
    ("Is preoperative anaemia associated with longer hospital stay after colorectal surgery?", "yes"),
]


def env_float(name, default):
    v = os.environ.get(name)
    return float(v) if v not in (None, "") else default


def env_int(name, default=None):
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else default


def chat_text(messages):
    """A prompt after a Qwen-style chat template, as verl dumps it in `input`."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    parts = [f"<|im_start|>{m.get('role', 'user')}\n{m.get('content', '')}<|im_end|>\n" for m in messages]
    return "".join(parts) + "<|im_start|>assistant\n"


def _row(prompt, ground_truth, data_source, extra=None):
    return {"prompt": prompt, "ground_truth": str(ground_truth), "data_source": data_source, "extra_info": extra or {}}


def _from_record(rec, index):
    """One training row from the shapes medical data comes in: verl RL rows, PubMedQA, plain question/answer."""
    if "prompt" in rec and isinstance(rec.get("reward_model"), dict):
        return _row(rec["prompt"], rec["reward_model"].get("ground_truth", ""), rec.get("data_source", "unknown"), rec.get("extra_info"))
    if "QUESTION" in rec:
        return _row(rec["QUESTION"], rec.get("final_decision", ""), "pubmedqa", {"index": index})
    question = rec.get("question") or rec.get("prompt") or rec.get("Open-ended Verifiable Question") or json.dumps(rec)[:500]
    answer = rec.get("answer") or rec.get("solution") or rec.get("final_decision") or rec.get("Ground-True Answer") or ""
    return _row(question, answer, rec.get("data_source", "unknown"), {"index": index})


def read_records(path, log):
    """The raw records (dicts) of a JSONL, JSON or CSV file. Python's standard library has no parquet reader: for a parquet
    file (checked by its PAR1 magic) a sibling .jsonl of the same stem is read if present, else None (nothing read)."""
    source = path
    if path.endswith(".parquet"):
        with open(path, "rb") as f:
            magic = f.read(4)
        if magic != b"PAR1":
            raise ValueError(f"{path} is not a parquet file (no PAR1 magic)")
        source = path[: -len(".parquet")] + ".jsonl"
        if not os.path.exists(source):
            log(f"stand-in: cannot read parquet without pyarrow; no {source} beside it")
            return None
    with open(source, encoding="utf-8", newline="") as f:
        if source.endswith(".csv"):
            import csv
            return list(csv.DictReader(f))
        text = f.read()
    if source.endswith((".jsonl", ".ndjson")):
        return [json.loads(l) for l in text.splitlines() if l.strip()]
    data = json.loads(text)
    return [r for r in (list(data.values()) if isinstance(data, dict) else data) if isinstance(r, dict)]


def read_rows(paths, log):
    """Rows from data files (read_records); missing or unreadable files leave the built-in medical prompts."""
    rows = []
    for path in paths:
        if not os.path.exists(path):
            log(f"stand-in: {path} does not exist; using the built-in medical prompts")
            continue
        records = read_records(path, log)
        if records is None:
            log("stand-in: using the built-in medical prompts")
            continue
        rows.extend(_from_record(r, i) for i, r in enumerate(records))
    if not rows:
        rows = [dict(_row(q, a, "pubmedqa", {"index": i}), builtin=True) for i, (q, a) in enumerate(BUILTIN_PROMPTS)]
    return rows


def fake_response(row, rng, skill):
    """A response whose answer is right with probability `skill` (rising over training, so the reward curve rises)."""
    gt = row["ground_truth"]
    options = ["yes", "no", "maybe"] if gt.lower() in ("yes", "no", "maybe") else [gt, "I cannot determine this from the information given", "unclear"]
    answer = gt if rng.random() < skill else rng.choice([o for o in options if o != gt] or options)
    reasoning = rng.choice([
        "The study design and the reported effect sizes are considered against the question.",
        "Weighing the cohort size, confounders and the confidence intervals of the primary outcome.",
        "The abstract's conclusion and the strength of the evidence decide the answer.",
    ])
    if rng.random() < 0.1:
        return f"<think>{reasoning}</think>\nThe answer is {answer}."
    return f"<think>{reasoning}</think>\n<answer>{answer}</answer>"


def load_function(path, name):
    """Imports a reward function from a Python file, as verl's custom_reward_function does."""
    spec = importlib.util.spec_from_file_location("custom_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["custom_module"] = module
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise AttributeError(f"Reward function '{name}' not found in '{path}'.")
    return getattr(module, name)


def load_dotted(dotted):
    """Imports `module.func` from the Python path, as `trl grpo --reward_funcs` does."""
    module, _, attr = dotted.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def call_maybe_async(fn, *args, **kwargs):
    result = fn(*args, **kwargs)
    return asyncio.run(result) if inspect.iscoroutine(result) else result


class Knobs:
    def __init__(self):
        self.pace = env_float("MEDRL_STANDIN_STEP_SECONDS", 0.3)
        self.steps = env_int("MEDRL_STANDIN_STEPS")
        self.crash_at = env_int("MEDRL_STANDIN_CRASH_AT_STEP")
        self.exit_code = env_int("MEDRL_STANDIN_EXIT_CODE", 1)
        self.hang_at = env_int("MEDRL_STANDIN_HANG_AT_STEP")
        self.rng = random.Random(env_int("MEDRL_STANDIN_SEED", 0))

    def before_step(self, step, log):
        if self.hang_at is not None and step >= self.hang_at:
            log(f"stand-in: hanging at step {step} (MEDRL_STANDIN_HANG_AT_STEP)")
            while True:
                time.sleep(3600)
        if self.crash_at is not None and step >= self.crash_at:
            raise RuntimeError(f"stand-in: crash requested at step {step} (MEDRL_STANDIN_CRASH_AT_STEP)")
        time.sleep(self.pace)


def join_machines(launch):
    """What a multi-machine accelerate launch needs before training: every machine reaches the main process.

    `launch` maps accelerate's flags to their values (`--num_machines` ...). With more than one machine, machine 0
    listens on --main_process_port (torch's TCPStore binds every address) and waits for the others; the others connect to
    --main_process_ip:--main_process_port, as torch.distributed's rendezvous does, and fail as it does when they cannot
    (MEDRL_STANDIN_RENDEZVOUS_SECONDS, default 120). Returns this machine's rank (0 on a single machine)."""
    import socket

    def value(flag, default=None):
        v = launch.get(flag)
        return (v[-1] if isinstance(v, list) else v) if v not in (None, []) else default

    machines = int(value("--num_machines", 1))
    if machines < 2:
        return 0
    rank = int(value("--machine_rank", 0))
    ip, port = value("--main_process_ip"), value("--main_process_port")
    # accelerate/utils/launch.py prepare_simple_launcher_cmd_env asserts these
    assert ip is not None, "When using multiple machines, you need to specify the main process IP."
    assert port is not None, "When using multiple machines, you need to specify the main process port."
    timeout = env_float("MEDRL_STANDIN_RENDEZVOUS_SECONDS", 120)
    deadline = time.time() + timeout
    if rank == 0:
        server = socket.create_server(("", int(port)), reuse_port=False)
        server.settimeout(timeout)
        peers = set()
        while len(peers) < machines - 1:
            try:
                conn, _ = server.accept()
            except socket.timeout:
                raise RuntimeError(f"torch.distributed.DistStoreError: Timed out after {timeout:g} seconds waiting for clients. {len(peers) + 1}/{machines} clients joined.")
            with conn:
                peers.add(conn.recv(16).decode().strip())
                conn.sendall(b"ok\n")
        server.close()
    else:
        while True:
            try:
                with socket.create_connection((ip, int(port)), timeout=5) as conn:
                    conn.sendall(f"{rank}\n".encode())
                    if conn.recv(16).startswith(b"ok"):
                        break
            except OSError:
                if time.time() > deadline:
                    raise RuntimeError(f"torch.distributed.DistNetworkError: The client socket has timed out after {timeout:g}s while trying to connect to ({ip}, {port}).")
                time.sleep(0.5)
    print(f"MedRL stand-in: machine {rank} of {machines} joined the main process at {ip}:{port} from {socket.gethostname()}", flush=True)
    return rank
