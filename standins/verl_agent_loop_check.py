"""Runs an agent loop the way verl's AgentLoopWorker runs it, with verl's own classes, against a scripted policy.

verl's rollout server (vLLM/SGLang on a GPU) cannot run here: the policy is a stand-in that answers each generate()
call with the next scripted reply, as token ids plus the end-of-turn token, in verl's own TokenOutput. Everything else
is verl's: the config composed by Hydra from the launch line, the agent loop file loaded with OmegaConf into
verl's _agent_loop_registry and built with hydra.utils.instantiate with the arguments that release's worker passes,
and AgentLoopOutput. The services the loop calls (the exam simulator) are real HTTP servers the test starts.

    python3 verl_agent_loop_check.py < request.json > answer.json

request: {"verl_root", "pylibs", "overrides": [...], "agent_name", "tokenizer": DIR, "paths": [folders for sys.path],
          "replies": [policy texts, in order], "sample": {dataset fields: raw_prompt, extra_info, ...}}
answer:  {"version", "prompt": text, "response": text (both decoded as verl's rollout dump decodes them), "segments":
          [{"mask": 0|1, "text"}], "num_turns", "extra_fields", "generate_calls", "prompt_tokens": [per call]}
"""
import asyncio
import inspect
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import verl_code_check  # noqa: E402  (compose and the import stubs, shared with the config check)


class ScriptedPolicy:
    """Stands in for verl's AsyncLLMServerManager / LLMServerClient: one scripted reply per generate() call."""

    def __init__(self, tokenizer, replies, token_output):
        self.tokenizer, self.replies, self.token_output = tokenizer, list(replies), token_output
        self.prompts = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        if not self.replies:
            raise RuntimeError("the scripted policy has no reply left: the loop asked for more turns than scripted")
        self.prompts.append(list(prompt_ids))
        text = self.replies.pop(0)
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        return self.token_output(token_ids=ids, log_probs=None)


def segments(tokenizer, ids, mask):
    out = []
    for token, m in zip(ids, mask):
        if not out or out[-1][0] != m:
            out.append((m, []))
        out[-1][1].append(token)
    return [{"mask": m, "text": tokenizer.decode(t, skip_special_tokens=True)} for m, t in out]


async def run(req):
    import hydra.utils
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop import agent_loop as verl_agent_loop
    from verl.utils.dataset.rl_dataset import RLHFDataset
    from verl.workers.rollout.replica import TokenOutput
    from transformers import AutoTokenizer

    config = verl_code_check.compose(req["verl_root"], req["overrides"])
    OmegaConf.resolve(config)  # as main_ppo's TaskRunner does before it builds the workers
    rollout = config.actor_rollout_ref.rollout
    # What AgentLoopWorker.__init__ does with the launch line's agent loop file.
    for entry in OmegaConf.load(rollout.agent.agent_loop_config_path):
        verl_agent_loop._agent_loop_registry[entry.name] = entry
    name = req["agent_name"]
    if name not in verl_agent_loop._agent_loop_registry:
        raise SystemExit(f"agent loop {name} not registered: {list(verl_agent_loop._agent_loop_registry)}")
    tokenizer = AutoTokenizer.from_pretrained(req["tokenizer"])
    policy = ScriptedPolicy(tokenizer, req["replies"], TokenOutput)
    # The arguments each release's _run_agent_loop passes (0.7: dataset_config; 0.8+: data_config wrapped; main adds
    # hf_model_type and tools).
    params = inspect.signature(verl_agent_loop.AgentLoopBase.__init__).parameters
    kwargs = dict(trainer_config=verl_agent_loop.DictConfigWrap(config=config), server_manager=policy,
                  tokenizer=tokenizer, processor=None, dataset_cls=RLHFDataset)
    if "dataset_config" in params:
        kwargs["dataset_config"] = config.data
    else:
        kwargs["data_config"] = verl_agent_loop.DictConfigWrap(config.data)
    if "hf_model_type" in params:
        kwargs["hf_model_type"] = "qwen2"
    if hasattr(verl_agent_loop, "ToolListWrap"):
        kwargs["tools"] = verl_agent_loop.ToolListWrap([])
    loop = hydra.utils.instantiate(config=verl_agent_loop._agent_loop_registry[name], **kwargs)
    sampling = dict(temperature=rollout.temperature, top_p=rollout.top_p, repetition_penalty=1.0, logprobs=False)
    output = await loop.run(sampling, **req["sample"])
    output = verl_agent_loop.AgentLoopOutput.model_validate(output.model_dump())  # verl's own schema, again
    return {
        "prompt": tokenizer.decode(output.prompt_ids, skip_special_tokens=True),
        "response": tokenizer.decode(output.response_ids, skip_special_tokens=True),
        "segments": segments(tokenizer, output.response_ids, output.response_mask),
        "num_turns": output.num_turns,
        "extra_fields": output.extra_fields,
        "generate_calls": len(policy.prompts),
        "prompt_tokens": [len(p) for p in policy.prompts],
    }


def main():
    req = json.load(sys.stdin)
    answer = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout = sys.stderr
    verl_code_check.setup_paths(req["verl_root"], req["pylibs"])
    sys.path[:0] = req.get("paths", [])
    result = asyncio.run(run(req))
    result["version"] = verl_code_check.version_of(req["verl_root"])
    json.dump(result, answer)
    answer.close()


if __name__ == "__main__":
    main()
