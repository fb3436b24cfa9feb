"""MedRL Studio stand-in for `python3 -m verl.trainer.main_ppo` (verl's PPO/GRPO trainer). Not verl: no GPU, no model.

It takes verl's Hydra overrides (key=value, +key=value) and, at a chosen pace, prints verl's console lines
(`step:N - key:value - ...`, behind Ray's `(TaskRunner pid=..., ip=...)` prefix like a real run) and writes:
  $VERL_FILE_LOGGER_PATH (trainer.logger has 'file')   {"step": N, "data": {...}} per step
  trainer.rollout_data_dir/{step}.jsonl                input, output, gts, score, step (+ the reward's extra keys);
                                                       decoded without special tokens (no <|im_start|>, role words
                                                       stay) and, under trainer.balance_batch, in shuffled order
  trainer.validation_data_dir/{step}.jsonl             the same plus reward, at step 0, every test_freq and the end
  trainer.default_local_dir/global_step_N/...          actor/ (critic/ for PPO, lora_adapter/ with LoRA), tiny files,
                                                       and latest_checkpointed_iteration.txt
Responses are made up (their answers get right more often as training goes on) and really scored: it imports
custom_reward_function.path and calls custom_reward_function.name (compute_score) on every response.
Data: JSONL or JSON files. Python's standard library has no parquet reader: for data.*_files in parquet (checked by the
PAR1 magic) it reads a sibling .jsonl of the same stem when there is one, else it uses built-in medical prompts; a missing
data file also falls back to the built-in prompts (real verl would fail); with them it trains at least 10 steps.
Before training it refuses what verl refuses, with verl's own messages: a missing actor micro batch
(actor.ppo_micro_batch_size_per_gpu), rollout/ref log-prob micro batch (ref when use_kl_loss or use_kl_in_reward) or
critic micro batch (PPO), both a deprecated global micro batch and its _per_gpu twin, ppo_mini_batch_size above
data.train_batch_size, the per-GPU rules (train_batch_size x n divisible by the GPUs, the normalized mini batch above 0
and divisible by the micro batch, the rollout's tensor_model_parallel_size dividing the GPUs; left out with no GPUs,
which real verl cannot run on), a PPO critic left on verl's default model path, and a trainer.logger backend its
version lacks (`file` below 0.6.0). Its version is the stand-in's metadata (standins/verl-*.dist-info, what
`importlib.metadata.version("verl")` reports to the checks before submit), or MEDRL_STANDIN_VERL_VERSION.
Also: MEDRL_STANDIN_RAY_PREFIX=0 prints the lines without the Ray prefix, MEDRL_STANDIN_ANSI=1 colours it as Ray does; MEDRL_STANDIN_VAL_SIZE (default 16) prompts
are validated.
"""

import json
import math
import os
import re
from importlib import metadata
import random
import sys
import time
import traceback

import standin_common as sc

RAY_PREFIX = f"(TaskRunner pid={os.getpid()}, ip=10.0.0.1) "
VERSION = os.environ.get("MEDRL_STANDIN_VERL_VERSION") or metadata.version("verl")


def version_tuple(v):
    """The release numbers of a PEP 440 version; a pre-release or dev build sorts just below its release."""
    m = re.match(r"v?(\d+(?:\.\d+)*)(.*)", v.strip())
    release = tuple(int(x) for x in m.group(1).split("."))
    release += (0,) * (3 - len(release))
    pre = re.match(r"[.-]?(a|b|c|rc|alpha|beta|pre|preview|dev)", m.group(2), re.I)
    return release + ((-1,) if pre else (0,))


def supported_loggers():
    """verl/utils/tracking.py Tracking.supported_backend; `file` (FileLogger) from 0.6.0."""
    backends = ["wandb", "mlflow", "swanlab", "vemlp_wandb", "tensorboard", "console", "clearml", "trackio"]
    return backends + (["file"] if version_tuple(VERSION) >= (0, 6, 0, 0) else [])


def check_mutually_exclusive(cfg, name, param):
    """verl's check (verl/utils/config.py validate_config; ray_trainer._validate_config before): one of the two is set."""
    mbs, mbs_per_gpu = cfg.get(f"{name}.{param}"), cfg.get(f"{name}.{param}_per_gpu")
    if mbs is None and mbs_per_gpu is None:
        raise ValueError(f"[{name}] Please set at least one of '{name}.{param}' or '{name}.{param}_per_gpu'.")
    if mbs is not None and mbs_per_gpu is not None:
        raise ValueError(
            f"[{name}] You have set both '{name}.{param}' AND '{name}.{param}_per_gpu'. Please remove "
            f"'{name}.{param}' because only '*_{param}_per_gpu' is supported (the former is deprecated)."
        )


def validate_config(cfg):
    """What verl checks before it trains, in its order, with its messages (verl/utils/config.py validate_config,
    verl/workers/config/actor.py ActorConfig, critic.py CriticConfig, fsdp_workers.py's batch normalization)."""
    n_gpus = int(cfg.get("trainer.n_gpus_per_node", 8)) * int(cfg.get("trainer.nnodes", 1))
    n = int(cfg.get("actor_rollout_ref.rollout.n", 1))
    train_batch = int(cfg.get("data.train_batch_size", 1024))
    dynamic = cfg.get("actor_rollout_ref.actor.use_dynamic_bsz", False) is True
    sp = int(cfg.get("actor_rollout_ref.actor.ulysses_sequence_parallel_size", 1))
    use_ref = cfg.get("actor_rollout_ref.actor.use_kl_loss", False) is True or cfg.get("algorithm.use_kl_in_reward", False) is True
    use_critic = cfg.get("algorithm.adv_estimator", "gae") == "gae"
    if n_gpus and not dynamic and (train_batch * n) % n_gpus != 0:
        raise AssertionError(f"real_train_batch_size ({train_batch * n}) must be divisible by minimal possible batch size ({n_gpus})")
    actor_mini = int(cfg.get("actor_rollout_ref.actor.ppo_mini_batch_size", 256))
    micro, micro_per_gpu = cfg.get("actor_rollout_ref.actor.ppo_micro_batch_size"), cfg.get("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu")
    if not dynamic:
        if micro is not None and micro_per_gpu is not None:
            raise ValueError(
                "[actor] You have set both 'actor.ppo_micro_batch_size' AND 'actor.ppo_micro_batch_size_per_gpu'. "
                "Please remove 'actor.ppo_micro_batch_size' because only '*_ppo_micro_batch_size_per_gpu' is "
                "supported (the former is deprecated)."
            )
        if micro is None and micro_per_gpu is None:
            raise AssertionError(
                "[actor] Please set at least one of 'actor.ppo_micro_batch_size' or "
                "'actor.ppo_micro_batch_size_per_gpu' if use_dynamic_bsz is not enabled."
            )
        if train_batch < actor_mini:
            raise ValueError(f"train_batch_size ({train_batch}) must be >= actor.ppo_mini_batch_size ({actor_mini})")
        if use_ref:
            check_mutually_exclusive(cfg, "actor_rollout_ref.ref", "log_prob_micro_batch_size")
        check_mutually_exclusive(cfg, "actor_rollout_ref.rollout", "log_prob_micro_batch_size")
    critic_mini = int(cfg.get("critic.ppo_mini_batch_size", actor_mini))
    if use_critic:
        critic_dynamic = cfg.get("critic.use_dynamic_bsz", dynamic) is True
        if not critic_dynamic:
            check_mutually_exclusive(cfg, "critic", "ppo_micro_batch_size")
            if train_batch < critic_mini:
                raise ValueError(f"train_batch_size ({train_batch}) must be >= critic.ppo_mini_batch_size ({critic_mini})")
        if cfg.get("critic.model.path") is None:
            # ppo_trainer.yaml's default, which the model loader then fails to find.
            raise OSError("Incorrect path_or_model_id: '~/models/deepseek-llm-7b-chat'. Please provide either the path to a local folder or the repo_id of a model on the Hub.")
    if n_gpus:
        dp = n_gpus // sp
        # fsdp_workers.py: each GPU's share of a mini batch, and its micro batches.
        for role, mini, per_gpu, glob in (
            ("actor", actor_mini, micro_per_gpu, micro),
            *((("critic", critic_mini, cfg.get("critic.ppo_micro_batch_size_per_gpu"), cfg.get("critic.ppo_micro_batch_size")),) if use_critic else ()),
        ):
            local = mini * n // dp
            if local <= 0:
                raise AssertionError(f"ppo_mini_batch_size {local} should be larger than 0 after normalization")
            if glob is not None and not dynamic:
                per_gpu = int(glob) // dp
            if per_gpu is not None and not dynamic and local % int(per_gpu) != 0:
                raise AssertionError(f"normalized ppo_mini_batch_size {local} should be divisible by ppo_micro_batch_size_per_gpu {per_gpu}")
        tp = int(cfg.get("actor_rollout_ref.rollout.tensor_model_parallel_size", 2))
        if n_gpus % tp != 0:
            raise AssertionError(f"rollout world_size: {n_gpus} is not divisible by infer_tp: {tp}")


def parse_value(text):
    """A Hydra override value: lists, quoted strings, numbers, booleans, null; anything else stays a string."""
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        inner = t[1:-1].strip()
        return [parse_value(x) for x in split_top(inner)] if inner else []
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1].replace("\\" + t[0], t[0]).replace("\\\\", "\\")
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "none", "~"):
        return None
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t


def split_top(s):
    """Splits a Hydra list body on commas outside quotes and brackets."""
    out, cur, depth, quote = [], "", 0, None
    for ch in s:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            cur += ch
        elif ch == "[":
            depth += 1
            cur += ch
        elif ch == "]":
            depth -= 1
            cur += ch
        elif ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def parse_overrides(argv):
    cfg = {}
    for arg in argv:
        if "=" not in arg or arg.startswith("-"):
            raise SystemExit(f"Error: stand-in main_ppo takes Hydra overrides KEY=VALUE, got {arg!r}")
        key, value = arg.split("=", 1)
        cfg[key.lstrip("+")] = parse_value(value)
    return cfg


def files_of(v):
    return [] if v is None else [str(x) for x in v] if isinstance(v, list) else [str(v)]


class Run:
    def __init__(self, cfg):
        self.cfg = cfg
        self.knobs = sc.Knobs()
        self.prefix = RAY_PREFIX if os.environ.get("MEDRL_STANDIN_RAY_PREFIX", "1") != "0" else ""
        if self.prefix and os.environ.get("MEDRL_STANDIN_ANSI") == "1":
            self.prefix = f"\x1b[36m{RAY_PREFIX.rstrip()}\x1b[0m "  # Ray colours the prefix on a terminal
        loggers = cfg.get("trainer.logger", ["console", "wandb"])
        self.loggers = loggers if isinstance(loggers, list) else [loggers]
        for backend in self.loggers:
            # verl/utils/tracking.py Tracking.__init__
            assert backend in supported_loggers(), f"{backend} is not supported"
        project = cfg.get("trainer.project_name", "verl_examples")
        experiment = cfg.get("trainer.experiment_name", "gsm8k")
        self.ckpt_dir = str(cfg.get("trainer.default_local_dir", f"checkpoints/{project}/{experiment}"))
        self.rollout_dir = cfg.get("trainer.rollout_data_dir")
        self.val_dir = cfg.get("trainer.validation_data_dir")
        self.metrics_file = None
        if "file" in self.loggers:
            path = os.environ.get("VERL_FILE_LOGGER_PATH") or os.path.join(os.environ.get("VERL_FILE_LOGGER_ROOT", "."), project, f"{experiment}.jsonl")
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self.metrics_file = open(path, "w", encoding="utf-8")
        self.n = int(cfg.get("actor_rollout_ref.rollout.n", 1))
        self.batch = int(cfg.get("data.train_batch_size", 8))
        self.grpo = cfg.get("algorithm.adv_estimator", "gae") == "grpo"
        reward_path = cfg.get("custom_reward_function.path")
        self.reward_fn = sc.load_function(str(reward_path), str(cfg.get("custom_reward_function.name", "compute_score"))) if reward_path else None

    def print(self, line):
        print(f"{self.prefix}{line}", flush=True)

    def log_metrics(self, step, metrics, numpy_style=False):
        if "console" in self.loggers:
            parts = [f"step:{step}"] + [f"{k}:{f'np.float64({v!r})' if numpy_style else repr(v)}" for k, v in metrics.items()]
            self.print(" - ".join(parts))
        if self.metrics_file:
            self.metrics_file.write(json.dumps({"step": step, "data": metrics}) + "\n")
            self.metrics_file.flush()

    def score(self, row, response):
        if self.reward_fn is None:
            return {"score": 1.0 if row["ground_truth"].lower() in response.lower() else 0.0}
        result = sc.call_maybe_async(self.reward_fn, data_source=row["data_source"], solution_str=response, ground_truth=row["ground_truth"], extra_info=row["extra_info"])
        return dict(result) if isinstance(result, dict) else {"score": float(result)}

    def generate(self, rows, skill, n):
        """n responses per prompt, consecutive (a GRPO group), each scored by the reward function."""
        out = []
        for row in rows:
            # verl decodes dumps with skip_special_tokens=True: the chat template's markers are gone, role words stay.
            prompt = sc.chat_text(row["prompt"]).replace("<|im_start|>", "").replace("<|im_end|>", "")
            for _ in range(n):
                response = sc.fake_response(row, self.knobs.rng, skill)
                scored = self.score(row, response)
                out.append((prompt, response, row["ground_truth"], scored))
        return out

    def dump(self, folder, step, samples, validation=False):
        if not folder:
            return
        os.makedirs(str(folder), exist_ok=True)
        with open(os.path.join(str(folder), f"{step}.jsonl"), "w", encoding="utf-8") as f:
            for prompt, response, gt, scored in samples:
                entry = {"input": prompt, "output": response, "gts": gt, "score": float(scored["score"]), "step": step}
                entry.update({k: v for k, v in scored.items() if k != "score"})
                if validation:
                    entry["reward"] = float(scored["score"])
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def validate(self, step, val_rows, skill):
        samples = self.generate(val_rows, skill, 1)
        self.dump(self.val_dir, step, samples, validation=True)
        by_source = {}
        for (_, _, _, scored), row in zip(samples, val_rows):
            by_source.setdefault(row["data_source"], []).append(float(scored["score"]))
        metrics = {}
        for source, scores in by_source.items():
            mean = sum(scores) / len(scores)
            metrics[f"val-core/{source}/reward/mean@1"] = mean
            metrics[f"val-core/{source}/acc/mean@1"] = mean
        return metrics

    def checkpoint(self, step):
        root = os.path.join(self.ckpt_dir, f"global_step_{step}")
        actor = os.path.join(root, "actor")
        os.makedirs(os.path.join(actor, "huggingface"), exist_ok=True)
        for name in ("model_world_size_1_rank_0.pt", "optim_world_size_1_rank_0.pt", "extra_state_world_size_1_rank_0.pt"):
            with open(os.path.join(actor, name), "wb") as f:
                f.write(b"stand-in checkpoint shard (not a torch file)\n")
        with open(os.path.join(actor, "fsdp_config.json"), "w") as f:
            json.dump({"FSDP_version": 1, "world_size": 1}, f)
        model = str(self.cfg.get("actor_rollout_ref.model.path", "stand-in"))
        with open(os.path.join(actor, "huggingface", "config.json"), "w") as f:
            json.dump({"_name_or_path": model, "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}, f)
        with open(os.path.join(actor, "huggingface", "tokenizer_config.json"), "w") as f:
            json.dump({"tokenizer_class": "Qwen2Tokenizer"}, f)
        rank = self.cfg.get("actor_rollout_ref.model.lora_rank", 0) or 0
        if int(rank) > 0:
            lora = os.path.join(actor, "lora_adapter")
            os.makedirs(lora, exist_ok=True)
            with open(os.path.join(lora, "adapter_config.json"), "w") as f:
                json.dump({"r": int(rank), "lora_alpha": self.cfg.get("actor_rollout_ref.model.lora_alpha", 16), "base_model_name_or_path": model, "peft_type": "LORA"}, f)
            with open(os.path.join(lora, "adapter_model.safetensors"), "wb") as f:
                f.write(b"stand-in adapter\n")
        if not self.grpo:
            critic = os.path.join(root, "critic")
            os.makedirs(critic, exist_ok=True)
            with open(os.path.join(critic, "model_world_size_1_rank_0.pt"), "wb") as f:
                f.write(b"stand-in critic shard\n")
        with open(os.path.join(root, "data.pt"), "wb") as f:
            f.write(b"stand-in dataloader state\n")
        with open(os.path.join(self.ckpt_dir, "latest_checkpointed_iteration.txt"), "w") as f:
            f.write(str(step))

    def fit(self):
        cfg = self.cfg
        train = sc.read_rows(files_of(cfg.get("data.train_files")), self.print)
        val = sc.read_rows(files_of(cfg.get("data.val_files")), self.print) if cfg.get("data.val_files") else train[:8]
        val = val[: int(os.environ.get("MEDRL_STANDIN_VAL_SIZE", "16"))]
        epochs = int(cfg.get("trainer.total_epochs", 1))
        per_epoch = max(1, len(train) // self.batch)
        total = int(cfg.get("trainer.total_training_steps") or 0) or per_epoch * epochs
        if self.knobs.steps is not None:
            total = self.knobs.steps
        elif train and train[0].get("builtin"):
            total = max(total, 10)  # the built-in prompts alone would make a one-step demo
        elif total > 20:
            total = 20
        save_freq = int(cfg.get("trainer.save_freq", -1))
        test_freq = int(cfg.get("trainer.test_freq", -1))
        self.print(f"Size of train dataloader: {per_epoch}, Size of val dataloader: 1")
        self.print(f"Total training steps: {total}")
        if cfg.get("trainer.val_before_train", True) is not False:
            metrics = self.validate(0, val, 0.3)
            self.print(f"Initial validation metrics: {metrics}")
            self.log_metrics(0, metrics, numpy_style=True)
        last_val = {}
        for step in range(1, total + 1):
            self.knobs.before_step(step, self.print)
            started = time.time()
            skill = 0.3 + 0.6 * step / total
            epoch = (step - 1) // per_epoch
            first = ((step - 1) % per_epoch) * self.batch
            rows = [train[(first + i) % len(train)] for i in range(self.batch)]
            samples = self.generate(rows, skill, self.n)
            # trainer.balance_batch (on by default) reorders the batch before the dump: a group's rows are not adjacent.
            if cfg.get("trainer.balance_batch", True) is not False:
                self.knobs.rng.shuffle(samples)
            self.dump(self.rollout_dir, step, samples)
            scores = [float(s[3]["score"]) for s in samples]
            lengths = [len(s[1]) / 4 for s in samples]
            gen = max(0.001, time.time() - started)
            metrics = {
                "training/global_step": step,
                "training/epoch": epoch,
                "actor/entropy": round(0.9 - 0.3 * step / total + self.knobs.rng.uniform(-0.02, 0.02), 6),
                "actor/kl_loss": round(0.001 * step + self.knobs.rng.uniform(0, 0.0005), 6),
                "actor/kl_coef": float(cfg.get("actor_rollout_ref.actor.kl_loss_coef", 0.001)),
                "actor/pg_loss": round(self.knobs.rng.uniform(-0.05, 0.05), 6),
                "actor/pg_clipfrac": round(self.knobs.rng.uniform(0, 0.01), 6),
                "actor/ppo_kl": round(self.knobs.rng.uniform(-0.001, 0.001), 6),
                "actor/grad_norm": round(self.knobs.rng.uniform(0.1, 0.6), 6),
                "actor/lr": float(cfg.get("actor_rollout_ref.actor.optim.lr", 1e-6)),
                "critic/score/mean": sum(scores) / len(scores),
                "critic/score/max": max(scores),
                "critic/score/min": min(scores),
                "critic/rewards/mean": sum(scores) / len(scores),
                "critic/rewards/max": max(scores),
                "critic/rewards/min": min(scores),
                "critic/advantages/mean": 0.0,
                "critic/advantages/max": round(max(scores) - sum(scores) / len(scores), 6),
                "critic/advantages/min": round(min(scores) - sum(scores) / len(scores), 6),
                "response_length/mean": sum(lengths) / len(lengths),
                "response_length/max": max(lengths),
                "response_length/min": min(lengths),
                "response_length/clip_ratio": 0.0,
                "prompt_length/mean": sum(len(s[0]) / 4 for s in samples) / len(samples),
                "timing_s/gen": round(gen * 0.6, 6),
                "timing_s/update_actor": round(gen * 0.3, 6),
                "timing_s/step": round(gen, 6),
                "perf/throughput": round(sum(lengths) / gen, 3),
            }
            if not self.grpo:
                metrics["critic/vf_loss"] = round(self.knobs.rng.uniform(0.01, 0.2), 6)
                metrics["critic/values/mean"] = round(self.knobs.rng.uniform(-0.1, 0.5), 6)
            if test_freq > 0 and (step % test_freq == 0 or step == total):
                last_val = self.validate(step, val, skill)
                metrics.update(last_val)
            if save_freq > 0 and (step % save_freq == 0 or step == total):
                self.checkpoint(step)
            self.log_metrics(step, metrics)
        if last_val:
            self.print(f"Final validation metrics: {last_val}")


def verl_code_verdict(argv):
    """With MEDRL_STANDIN_VERL_CODE ({"python", "verl_root", "pylibs"}: a venv with verl's imports and a verl source
    tree), verl's own composition and validation run on the launch line first (standins/verl_code_check.py), so the
    stand-in refuses what that verl refuses, with its words. Without it (the demo), validate_config's copy of the rules."""
    spec = os.environ.get("MEDRL_STANDIN_VERL_CODE")
    if not spec:
        return None
    import subprocess

    where = json.loads(spec)
    # The one trainer that runs with no GPU: the line is checked as on one GPU (verl itself refuses 0: it divides by it).
    argv = ["trainer.n_gpus_per_node=1" if a == "trainer.n_gpus_per_node=0" else a for a in argv]
    check = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "verl_code_check.py")
    req = {"verl_root": where["verl_root"], "pylibs": where["pylibs"], "cases": [{"name": "launch", "overrides": argv}]}
    r = subprocess.run([where["python"], check], input=json.dumps(req), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"verl_code_check.py failed: {r.stderr[-2000:]}")
    answer = json.loads(r.stdout)
    return {**answer["cases"][0], "version": answer["version"]}


def join_ray_cluster(cfg):
    """What verl's driver does with the Ray cluster RAY_ADDRESS names (Ray on Slurm, or a `ray job submit` to a
    cluster): joins it, refuses a cluster with fewer GPUs than trainer.nnodes x trainer.n_gpus_per_node as
    ResourcePoolManager._check_resource_available does (verl 0.7.0), and runs a task on every node, where verl's workers
    would load the reward function."""
    import socket
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    # verl 0.7.0's main_ppo: ray.init(runtime_env=get_ppo_ray_runtime_env()), its variables less those already set.
    # Under `ray job submit`, Ray merges it with the job's runtime_env and refuses a variable set in both.
    ppo_env = {"TOKENIZERS_PARALLELISM": "true", "NCCL_DEBUG": "WARN", "VLLM_LOGGING_LEVEL": "WARN", "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "true",
               "VLLM_ALLREDUCE_USE_SYMM_MEM": "0", "CUDA_DEVICE_MAX_CONNECTIONS": "1", "NCCL_CUMEM_ENABLE": "0"}
    working_dir = json.loads(os.environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR", "{}")).get("runtime_env", {}).get("working_dir")
    runtime_env = {"env_vars": {k: v for k, v in ppo_env.items() if os.environ.get(k) is None}, **({"working_dir": None} if working_dir is None else {})}
    ray.init(runtime_env=runtime_env, logging_level="ERROR")  # the address is RAY_ADDRESS's, as for verl's ray.init()
    try:
        per_node = ray._private.state.available_resources_per_node()
        available = sum(r.get("GPU", 0) for r in per_node.values())
        required = int(cfg.get("trainer.nnodes", 1)) * int(cfg.get("trainer.n_gpus_per_node", 8))
        if available < required:
            raise ValueError(f"Total available GPUs {available} is less than total desired GPUs {required}")
        reward = cfg.get("custom_reward_function.path")
        name = str(cfg.get("custom_reward_function.name", "compute_score"))

        @ray.remote(num_cpus=0)
        def worker():
            loaded = "no custom reward"
            if reward:
                sc.load_function(str(reward), name)  # raises on a node that cannot see or import it
                # A reward importing a module beside it by name needs its folder on the worker's PYTHONPATH.
                on_path = os.path.dirname(os.path.abspath(str(reward))) in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                loaded = f"loaded {name} from {reward}, its folder {'on' if on_path else 'NOT on'} PYTHONPATH"
            return socket.gethostname(), os.environ.get("MEDRL_RUN_ID", "(unset)"), loaded

        alive = [n for n in ray.nodes() if n["Alive"]]
        strategy = lambda n: NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
        for n, (host, run_id, loaded) in zip(alive, ray.get([worker.options(scheduling_strategy=strategy(n)).remote() for n in alive])):
            print(f"MedRL stand-in: Ray node {host} ({n['NodeManagerAddress']}): MEDRL_RUN_ID={run_id}, {loaded}", flush=True)
    finally:
        ray.shutdown()


def main(argv):
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__ + sc.__doc__.split("\n", 1)[1])
        return 0
    print("MedRL stand-in for verl.trainer.main_ppo (not verl: no GPU, no model; verl's output formats only)", flush=True)
    cfg = parse_overrides(argv)
    knobs = sc.Knobs()
    try:
        verdict = verl_code_verdict(argv)
        if verdict and verdict["refused"]:
            raise RuntimeError(f"verl's own code refused the launch line ({verdict['stage']}): {verdict['message']}")
        if verdict:
            print(f"verl {verdict['version']}'s own code accepted the launch line ({', '.join(verdict['ran'])})", flush=True)
        for note in (verdict or {}).get("notes", []):
            print(f"WARNING (verl's own code): {note}", flush=True)
        validate_config(cfg)
        if os.environ.get("RAY_ADDRESS"):
            join_ray_cluster(cfg)
        run = Run(cfg)
        run.fit()
    except Exception:
        print(f"Error executing job with overrides: {argv}", file=sys.stderr, flush=True)
        traceback.print_exc()
        return knobs.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
