"""Runs verl's own code on a verl launch line, without a GPU: what makes a real `python3 -m verl.trainer.main_ppo` refuse
to start, or start and quietly do less than asked. Used by the tests (against every verl source tree under
shared/verl/versions) and by the verl stand-in before it "trains", so a stand-in run refuses what verl refuses.

    python3 verl_code_check.py < request.json > answer.json

request: {"verl_root": DIR (holds verl/), "pylibs": DIR (hydra, omegaconf, antlr4), "cases": [{"name", "overrides": [...],
          "reward_rows": [{data_source, solution_str, ground_truth, extra_info}], "dataset": [PARQUET, ...],
          "tokenizer": DIR}]}
         "keys": true to list the default config's keys
answer:  {"version": "0.6.1", "keys": [...], "cases": [{"name", "refused": bool, "stage", "message", "notes": [...], "ran": [...]}]}

What runs, per case, in the order verl runs it (`ran` lists what ran, so a table can say which check spoke):
  compose    Hydra composes ppo_trainer.yaml with the overrides, as main_ppo's @hydra.main does (an unknown key fails),
             then, where that version's main_ppo does, migrate_legacy_reward_impl moves the old reward keys (0.8)
  validate   verl's validation: RayPPOTrainer._validate_config (up to 0.5, and the DiagAgent fork; called on an object
             with the attributes it reads) or verl.utils.config.validate_config (0.6+, with the config dataclasses' own
             checks), with need_reference_policy / need_critic as main_ppo computes them
             (0.8+ with LoRA imports get_vllm_max_lora_rank from a module that imports vLLM: that one function is
             served from the version's own source, see vllm_lora_rank_shim)
  rollout    the vLLM rollout's chunked-prefill check: the statements of vLLMRollout.__init__ that compute
             max_num_batched_tokens and max_model_len and raise, taken from the version's own source with `ast` and run
             on the composed rollout config (vLLM itself cannot run here); only where the rollout mode is sync
  reward     verl's get_custom_reward_fn loads custom_reward_function.path/name and it is called on reward_rows
  dataset    verl's RLHFDataset reads the parquet files with the tokenizer (made offline) and gives its first row
Notes (verl starts, but does less than asked): trainer.save_freq <= 0 (ray_trainer's fit loop saves only when
save_freq > 0: no checkpoint is ever written), multi-turn that trains single-turn (0.7+ with no tool, interaction or
agent loop config runs single_turn_agent; 0.4-0.6's sync vLLM rollout never reads multi_turn), the DiagAgent fork's rollout calling its
exam simulator at addresses fixed in its source, a custom reward under the old top-level key that 0.9+ never reads, and an
agent loop config in sync rollout mode (0.5-0.6's default), where no agent loop runs.

Stubbed, because they do not install here and only their names are imported at import time: codetiming (Timer),
tensordict (TensorDict, NonTensorData, NonTensorStack, pad_sequence), pylatexenc; and transformers'
AutoModelForVision2Seq, which transformers 5 renamed (verl 0.6 imports the old name). See verl_import_stubs/.
"""

import ast
import functools
import json
import os
import sys
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def setup_paths(verl_root, pylibs):
    sys.path[:0] = [pylibs, verl_root, os.path.join(HERE, "verl_import_stubs")]
    # Importing AutoProcessor replaces the transformers module in sys.modules (transformers 5): alias on the new one.
    from transformers import AutoProcessor  # noqa: F401
    transformers = sys.modules["transformers"]
    if not hasattr(transformers, "AutoModelForVision2Seq"):
        transformers.AutoModelForVision2Seq = transformers.AutoModelForImageTextToText


def version_of(verl_root):
    with open(os.path.join(verl_root, "verl", "version", "version")) as f:
        return f.read().strip()


def compose(verl_root, overrides):
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=os.path.join(verl_root, "verl", "trainer", "config"), version_base=None):
        return hydra_compose(config_name="ppo_trainer", overrides=overrides)


def uses_reference(config):
    """main_ppo adds a reference policy worker when either KL is used (add_ref_policy_worker; need_reference_policy)."""
    return bool(config.algorithm.get("use_kl_in_reward", False) or config.actor_rollout_ref.actor.get("use_kl_loss", False))


def uses_critic(config):
    try:
        from verl.trainer.ppo.utils import need_critic
    except ImportError:  # 0.4-0.5 and the fork: RayPPOTrainer.__init__ decides by the advantage estimator
        return config.algorithm.adv_estimator == "gae"
    return need_critic(config)


SYNC_VLLM = ("verl", "workers", "rollout", "vllm_rollout", "vllm_rollout_spmd.py")


@functools.lru_cache(maxsize=None)
def source(verl_root, parts):
    """A file of the release's own source ("" when it has none), read once for all the cases."""
    path = os.path.join(verl_root, *parts)
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        return f.read()


def vllm_lora_rank_shim(verl_root):
    """0.8+ validate_config imports get_vllm_max_lora_rank from vllm_rollout/utils.py, a module that imports vLLM (which
    cannot install here). The function itself falls back to its own rank list without vLLM: it is taken from the
    version's source with `ast` and served as that module, and its package as an empty one."""
    name = "verl.workers.rollout.vllm_rollout.utils"
    path = os.path.join(verl_root, *name.split(".")) + ".py"
    text = source(verl_root, tuple(name.split(".")[:-1]) + ("utils.py",))
    if not text:
        return
    tree = ast.parse(text)
    fn = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_vllm_max_lora_rank"]
    if not fn:
        return
    try:
        __import__(name)
        return
    except ModuleNotFoundError:
        pass  # vLLM's own imports (vllm, zmq, cloudpickle): only this one function is needed
    package = types.ModuleType(name.rsplit(".", 1)[0])
    package.__path__ = []
    module = types.ModuleType(name)
    module.__file__ = path
    exec("from typing import Literal, get_args", module.__dict__)
    exec(compile(ast.Module(body=fn, type_ignores=[]), path, "exec"), module.__dict__)
    sys.modules[package.__name__] = package
    sys.modules[name] = module


def validate(config):
    try:
        from verl.utils.config import validate_config
    except ImportError:
        validate_config = None
    if validate_config is not None:
        validate_config(config=config, use_reference_policy=uses_reference(config), use_critic=uses_critic(config))
        return "verl.utils.config.validate_config"
    from verl.trainer.ppo.ray_trainer import RayPPOTrainer

    trainer = types.SimpleNamespace(config=config, use_reference_policy=uses_reference(config), use_critic=uses_critic(config))
    RayPPOTrainer._validate_config(trainer)
    return "RayPPOTrainer._validate_config"


@functools.lru_cache(maxsize=None)
def chunked_prefill_code(verl_root):
    """vLLMRollout.__init__'s statements that compute max_num_batched_tokens and max_model_len and raise on the
    chunked-prefill limit, compiled once; None when this release's sync rollout has no such check."""
    text = source(verl_root, SYNC_VLLM)
    if not text:
        return None
    tree = ast.parse(text)
    init = next(
        f
        for c in tree.body
        if isinstance(c, ast.ClassDef) and c.name == "vLLMRollout"
        for f in c.body
        if isinstance(f, ast.FunctionDef) and f.name == "__init__"
    )
    wanted = []
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("max_num_batched_tokens", "max_model_len") for t in node.targets):
            wanted.append(node)
        elif isinstance(node, ast.If) and "enable_chunked_prefill" in ast.unparse(node.test):
            wanted.append(node)
    if not any(isinstance(n, ast.If) for n in wanted):
        return None
    wanted.sort(key=lambda n: n.lineno)
    code = compile(ast.Module(body=wanted, type_ignores=[]), os.path.join(verl_root, *SYNC_VLLM), "exec")
    return code, f"vllm_rollout_spmd.py lines {', '.join(str(n.lineno) for n in wanted)}"


def rollout_mode(config):
    return config.actor_rollout_ref.rollout.get("mode", "sync")


def chunked_prefill_check(verl_root, config):
    """vLLMRollout.__init__'s own statements (see the module doc); None when this version's sync rollout has none."""
    found = chunked_prefill_code(verl_root)
    if found is None or config.actor_rollout_ref.rollout.name != "vllm" or rollout_mode(config) != "sync":
        return None
    code, ran = found
    rollout = config.actor_rollout_ref.rollout
    exec(code, {"int": int}, {"config": rollout, "self": types.SimpleNamespace(config=rollout)})
    return ran


def fixed_simulator(verl_root, config):
    """The DiagAgent fork's rollout (always multi-turn under vLLM's SPMD engine) calls its exam simulator at addresses
    written in its source; a patched fork reads MEDRL_EXAM_SIMULATOR_URL instead."""
    text = source(verl_root, SYNC_VLLM)
    return config.actor_rollout_ref.rollout.name == "vllm" and "def call_openai_diaggym" in text and "MEDRL_EXAM_SIMULATOR_URL" not in text


def migrates_legacy_reward(verl_root):
    """0.8's main_ppo moves custom_reward_function.* and reward_model.* under reward.* (migrate_legacy_reward_impl);
    0.9 and main keep the old keys in their config (legacy_reward_impl.yaml) but main_ppo no longer moves them."""
    return "migrate_legacy_reward_impl(config)" in source(verl_root, ("verl", "trainer", "main_ppo.py"))


def as_main_ppo_sees_it(verl_root, config):
    if migrates_legacy_reward(verl_root):
        from verl.experimental.reward_loop.reward_loop import migrate_legacy_reward_impl

        return migrate_legacy_reward_impl(config)
    return config


def notes_for(verl_root, config):
    notes = []
    legacy = config.get("custom_reward_function") or {}
    if legacy.get("path") and "custom_reward_function" in (config.get("reward") or {}) and not migrates_legacy_reward(verl_root):
        notes.append("never reads custom_reward_function.path: this version's main_ppo does not move it to reward.custom_reward_function")
    if fixed_simulator(verl_root, config):
        notes.append("calls its exam simulator at fixed IP addresses (vllm_rollout_spmd.py call_openai_diaggym)")
    if int(config.trainer.get("save_freq", -1)) <= 0:
        notes.append(f"saves no checkpoint: trainer.save_freq is {config.trainer.get('save_freq')} (ray_trainer saves only when save_freq > 0)")
    multi_turn = config.actor_rollout_ref.rollout.get("multi_turn")
    sync_vllm = source(verl_root, SYNC_VLLM)
    if (
        multi_turn is not None
        and multi_turn.get("enable", False)
        and rollout_mode(config) == "sync"
        and config.actor_rollout_ref.rollout.name == "vllm"
        and sync_vllm
        and "multi_turn" not in sync_vllm
    ):
        notes.append("trains single-turn: the sync vLLM rollout (vllm_rollout_spmd.py) never reads multi_turn; only SGLang's does")
    if multi_turn is not None and multi_turn.get("enable", False) and rollout_mode(config) == "async":
        agent = config.actor_rollout_ref.rollout.get("agent", {}) or {}
        loop = agent.get("default_agent_loop", "single_turn_agent")
        if not multi_turn.get("tool_config_path") and not multi_turn.get("interaction_config_path") and loop == "single_turn_agent" and not agent.get("agent_loop_config_path"):
            notes.append("trains single-turn: multi_turn.enable with no tool, interaction or agent loop config runs single_turn_agent")
    agent = config.actor_rollout_ref.rollout.get("agent") or {}
    if agent.get("agent_loop_config_path") and rollout_mode(config) == "sync":
        notes.append("never runs its agent loop: ray_trainer builds the AgentLoopManager only when rollout.mode is async (sync here)")
    return notes


def check_reward(config, rows):
    from verl.trainer.ppo.reward import get_custom_reward_fn

    # The launch line puts the reward file's folder on PYTHONPATH (the files it imports from beside it).
    section = config.reward.custom_reward_function if "custom_reward_function" in (config.get("reward") or {}) else config.custom_reward_function
    path = section.path
    if path:
        sys.path.insert(0, os.path.dirname(path))
    fn = get_custom_reward_fn(config)
    if fn is None:
        raise ValueError("get_custom_reward_fn returned None: custom_reward_function.path is not set")
    scores = []
    for r in rows:
        # As verl's reward managers call it (NaiveRewardManager: keywords).
        s = fn(data_source=r["data_source"], solution_str=r["solution_str"], ground_truth=r["ground_truth"], extra_info=r.get("extra_info"))
        scores.append(s if isinstance(s, (int, float)) else s.get("score"))
    return scores


def check_dataset(config, files, tokenizer_dir):
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    ds = RLHFDataset(data_files=list(files), tokenizer=tok, config=config.data)
    row = ds[0]
    # Up to 0.6 a row is tokenized (input_ids); from 0.7 the agent loop tokenizes and a row carries raw_prompt.
    tokens = int(row["input_ids"].shape[-1]) if "input_ids" in row else None
    return {"rows": len(ds), "keys": sorted(row.keys()), "input_ids": tokens}


def short(e):
    if not str(e).strip():  # a bare `assert`: its own source line says what failed
        frame = traceback.extract_tb(e.__traceback__)[-1]
        return f"{type(e).__name__}: {frame.line} ({os.path.basename(frame.filename)}:{frame.lineno})"
    text = f"{type(e).__name__}: {e}".strip()
    return text.splitlines()[0] if "Key '" in text else text


def run_case(verl_root, case):
    out = {"name": case.get("name"), "refused": False, "stage": None, "message": None, "notes": [], "ran": []}
    stage = "compose"
    try:
        config = as_main_ppo_sees_it(verl_root, compose(verl_root, case["overrides"]))
        out["ran"].append("hydra compose")
        stage = "validate"
        out["ran"].append(validate(config))
        stage = "rollout"
        ran = chunked_prefill_check(verl_root, config)
        if ran:
            out["ran"].append(ran)
        out["notes"] = notes_for(verl_root, config)
        if case.get("reward_rows"):
            stage = "reward"
            out["scores"] = check_reward(config, case["reward_rows"])
            out["ran"].append("get_custom_reward_fn")
        if case.get("dataset"):
            stage = "dataset"
            out["dataset"] = check_dataset(config, case["dataset"], case["tokenizer"])
            out["ran"].append("RLHFDataset")
    except ImportError:
        raise  # this machine lacks one of verl's imports: no verdict of verl's, so the check itself fails
    except Exception as e:  # what verl would raise: the case's verdict, reported with its stage
        out.update(refused=True, stage=stage, message=short(e))
        if os.environ.get("MEDRL_VERL_CHECK_TRACE"):
            traceback.print_exc(file=sys.stderr)
    return out


def config_keys(verl_root):
    """Every key of the composed default config (what Hydra accepts without a `+`), dotted, sorted."""
    from omegaconf import DictConfig

    keys = []

    def walk(node, prefix):
        for k in node.keys():
            path = f"{prefix}{k}"
            keys.append(path)
            child = node._get_node(k)
            if isinstance(child, DictConfig) and not child._is_none() and not child._is_missing():
                walk(child, f"{path}.")

    walk(compose(verl_root, []), "")
    return sorted(keys)


def main():
    req = json.load(sys.stdin)
    # verl and ANTLR print to stdout ("[validate_config] All configuration checks passed"): the answer gets its own.
    answer = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout = sys.stderr
    setup_paths(req["verl_root"], req["pylibs"])
    version = version_of(req["verl_root"])
    if version.startswith("0.2."):
        sys.path.append(os.path.join(HERE, "verl_import_stubs", "fork-only"))
    vllm_lora_rank_shim(req["verl_root"])
    import verl  # noqa: F401  (the package's own import-time work runs once, as in main_ppo)

    cases = [run_case(req["verl_root"], c) for c in req.get("cases", [])]
    result = {"version": version, "cases": cases}
    if req.get("keys"):
        result["keys"] = config_keys(req["verl_root"])
    json.dump(result, answer)
    answer.close()


if __name__ == "__main__":
    main()
