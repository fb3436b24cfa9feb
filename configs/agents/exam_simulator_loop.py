"""DiagAgent's examination dialogue as a verl agent loop (verl 0.7 to main).

The policy asks for one examination per turn, the exam simulator (DiagGym behind an OpenAI-compatible server) answers,
and the answer comes back as the next user turn, "Here is the test result: ...", until the policy says it can diagnose.
This is what the seed's verl fork does inside its rollout (vLLMRolloutWithMultiTurn in DiagGym's
DiagAgent/train/rl/verl/verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py), done through verl's own extension
point, the agent loop (`actor_rollout_ref.rollout.agent.agent_loop_config_path`; MedRL writes that file from the spec's
`rollout.agentLoop`). As the seed does it:
- the simulator gets the case's record (the row's extra_info.text, as the seed's examples/diagnose.py writes it), then
  the earlier examinations joined by <SEP>, then "Exam name:\\n<name>\\nExam results:\\n"; completions API, 512 tokens,
  temperature 1.0, stop <SEP>;
- the examination is named on a line of the reply after "needed:" or "performed:" (the seed reads only the second line;
  any line is read here), and the dialogue ends at "The available information is sufficient to make a diagnosis.", at a
  reply that names no examination, after max_assistant_turns replies (unset: the seed's 12), or when the response is full.
Unlike the fork, which calls two fixed IP addresses and hands the policy the text "None" when a call fails:
- the simulator is MEDRL_EXAM_SIMULATOR_URL (its /v1 base), MEDRL_EXAM_SIMULATOR_MODEL and MEDRL_EXAM_SIMULATOR_API_KEY,
  which MedRL exports from the spec's `services.exam_simulator`;
- a call that still fails after 3 tries ends the episode, counted in extra_fields.exam_simulator_errors and logged
  without the case's text; the policy never sees an invented result.
The examinations asked for go to extra_fields.examination_history (verl 0.8+ passes extra_fields to the reward as
extra_info; the reward can also read them from the transcript).

Tokens: the policy's tokens are kept as it generated them (mask 1); a simulator turn is the chat template's text for that
user message (mask 0), from chat_turns.py beside this file (uploaded with it).
"""
import asyncio
import json
import logging
import os
import time
import urllib.error
import urllib.request
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput

from chat_turns import prompt_ids as conversation_ids, user_turn_ids  # beside this file, uploaded with it

logger = logging.getLogger(__name__)
logger.setLevel(os.getenv("VERL_LOGGING_LEVEL", "WARN"))

DIAGNOSIS_READY = "The available information is sufficient to make a diagnosis."
SEP = "<SEP>"
SEED_MAX_TURNS = 12
ATTEMPTS = 3


def requested_examination(reply):
    """The examination a reply asks for (the text after "needed:" or "performed:", full stops removed), else None."""
    for line in reply.split("\n"):
        for marker in ("needed:", "performed:"):
            if marker in line:
                name = line.split(marker, 1)[1].replace(".", "").strip()
                if name:
                    return name
    return None


def simulator_prompt(record, history, name):
    """The seed's prompt for DiagGym: the record, the earlier results, then the examination asked for."""
    context = record + "\nThe following summarizes the results from the patient's medical examination:\n"
    earlier = SEP.join(history) + SEP if history else ""
    return f"{context}{earlier}Exam name:\n{name}\nExam results:\n"


class SimulatorError(RuntimeError):
    pass


def ask_simulator(prompt, timeout=300):
    """One completion from the exam simulator; raises SimulatorError after ATTEMPTS failed tries."""
    url = os.environ.get("MEDRL_EXAM_SIMULATOR_URL")
    model = os.environ.get("MEDRL_EXAM_SIMULATOR_MODEL")
    if not url or not model:
        raise SimulatorError("MEDRL_EXAM_SIMULATOR_URL and MEDRL_EXAM_SIMULATOR_MODEL are not set: give the spec a "
                             "services.exam_simulator (MedRL exports them)")
    key = os.environ.get("MEDRL_EXAM_SIMULATOR_API_KEY") or "EMPTY"
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": 512, "temperature": 1.0,
                       "stop": [SEP, "<endoftext>"]}).encode("utf-8")
    last = None
    for attempt in range(ATTEMPTS):
        if attempt:
            time.sleep(0.5 * 2 ** attempt)
        request = urllib.request.Request(f"{url.rstrip('/')}/completions", data=body, method="POST",
                                         headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())["choices"][0]["text"].strip()
        except urllib.error.HTTPError as error:
            last = f"HTTP {error.code}"
            if error.code != 429 and error.code < 500:
                break
        except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError, KeyError, IndexError) as error:
            last = f"{type(error).__name__}: {error}"
    raise SimulatorError(f"exam simulator at {url}: {last}")


class ExamSimulatorAgentLoop(AgentLoopBase):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        rollout = self.config.actor_rollout_ref.rollout
        self.prompt_length = rollout.prompt_length
        self.response_length = rollout.response_length
        self.max_turns = rollout.multi_turn.max_assistant_turns or SEED_MAX_TURNS
        self.template_kwargs = dict(getattr(self, "apply_chat_template_kwargs", None) or {})

    async def run(self, sampling_params: dict[str, Any], **kwargs) -> AgentLoopOutput:
        messages = [dict(m) for m in kwargs["raw_prompt"]]
        extra_info = kwargs.get("extra_info") or {}
        record = extra_info.get("text")
        if not isinstance(record, str) or not record.strip():
            raise ValueError("the row has no extra_info.text (the patient record the exam simulator answers from): "
                             "convert the data with `medrl dataset convert --kind diagagent`")
        loop = asyncio.get_running_loop()
        prompt_ids = conversation_ids(self.tokenizer, messages, self.template_kwargs)[-self.prompt_length:]
        response_ids, response_mask, logprobs = [], [], []
        history, names, errors, assistant_turns, user_turns = [], [], 0, 0, 0
        ended = "max_turns"
        metrics = {}
        request_id = uuid4().hex
        while assistant_turns < self.max_turns:
            started = time.monotonic()
            output = await self.server_manager.generate(request_id=request_id, prompt_ids=prompt_ids + response_ids,
                                                        sampling_params=sampling_params)
            metrics["generate_sequences"] = metrics.get("generate_sequences", 0.0) + time.monotonic() - started
            assistant_turns += 1
            response_ids += output.token_ids
            response_mask += [1] * len(output.token_ids)
            if output.log_probs:
                logprobs += output.log_probs
            reply = self.tokenizer.decode(output.token_ids, skip_special_tokens=True)
            messages.append({"role": "assistant", "content": reply})
            if len(response_mask) >= self.response_length:
                ended = "response_full"
                break
            if DIAGNOSIS_READY in reply:
                ended = "diagnosis"
                break
            name = requested_examination(reply)
            if name is None:
                ended = "no_examination"
                break
            started = time.monotonic()
            try:
                result = await loop.run_in_executor(None, ask_simulator, simulator_prompt(record, history, name))
            except SimulatorError as error:
                errors += 1
                ended = "simulator_error"
                # The error names the server and the failure, never the record or the examination.
                logger.warning("exam simulator call failed, episode ended: %s", error)
                break
            finally:
                metrics["tool_calls"] = metrics.get("tool_calls", 0.0) + time.monotonic() - started
            history.append(f"Exam name:\n{name}\nExam results:\n{result}")
            names.append(name)
            content = f"Here is the test result: {result}"
            turn_ids = user_turn_ids(self.tokenizer, messages, content, output.token_ids, self.template_kwargs)
            messages.append({"role": "user", "content": content})
            user_turns += 1
            if len(response_mask) + len(turn_ids) >= self.response_length:
                ended = "response_full"
                break
            response_ids += turn_ids
            response_mask += [0] * len(turn_ids)
            if logprobs:
                logprobs += [0.0] * len(turn_ids)
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[: self.response_length],
            response_mask=response_mask[: self.response_length],
            response_logprobs=logprobs[: self.response_length] if logprobs else None,
            num_turns=assistant_turns + user_turns + 1,
            metrics=metrics,
            extra_fields={"examination_history": names, "exam_simulator_errors": errors, "dialogue_end": ended,
                          "turn_scores": [], "tool_rewards": []},
        )
