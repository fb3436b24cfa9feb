"""Starter reward for TRL GRPO with a VERIFIER model: a sequence-classification model that reads a completion next to the
row's reference answer and says whether they agree (HuatuoGPT-o1's FreedomIntelligence/medical_o1_verifier_3B).

Why a function and not `reward: {model: ...}`: TRL scores a reward model on prompt + completion alone, loaded with
num_labels=1 and read as logits[:, 0] (trl/trainer/grpo_trainer.py, TRL 1.10). This verifier has two labels (False/True)
and its own prompt: the model's final response and the reference answer in the template below, the verifier
tokenizer's EOS at the end, no special tokens added (HuatuoGPT-o1 ppo_utils/ppo_trainer_medo1.py, get_reward_o1).

TRL signature: medical_verifier(prompts, completions, **kwargs) -> list[float]; the reference answer is the row's
`solution` column (what `medrl dataset convert --format trl-prompt-only --map question=...,answer=...` writes; TRL passes
every column but `prompt` as a keyword). Scores, as HuatuoGPT-o1: 1.0 when P(True) > 0.4, else 0.1; with
REQUIRE_FORMAT, 0.0 for a completion without exactly one "## Thinking" and one "## Final Response" section.

The verifier is loaded once per training process, on that process's GPU, at the first call (nothing is loaded or
downloaded at import): MEDRL_VERIFIER_MODEL (a local folder or hub id; set it under the spec's `env:`), else VERIFIER.
Needs torch and transformers (both come with TRL).
"""
import contextlib
import os
import re

VERIFIER = "FreedomIntelligence/medical_o1_verifier_3B"
REFERENCE_COLUMN = "solution"
# HuatuoGPT-o1's RL stage gives 0.0 to a completion without its SFT format; off by default, since a policy fine-tuned on
# other data never writes "## Final Response" and would get no signal at all.
REQUIRE_FORMAT = False
THRESHOLD = 0.4
MAX_LENGTH = 4000
BATCH = 8

TEMPLATE = """<Model Response>
{}
</Model Response>

<Reference Answer>
{}
</Reference Answer>

Your task is to evaluate the model response by comparing it to the reference answer. If the model response is correct and aligns with the reference answer, output "True" . If it is incorrect or fails to select the correct option (if options are provided), output "False" . {}"""

_FINAL = re.compile(r"## Final Response\n\n(.*)", re.DOTALL)
_loaded = None


def _text(completion):
    """A completion as text: conversational completions are [{"role": "assistant", "content": ...}]."""
    if isinstance(completion, list):
        return "".join(m.get("content") or "" for m in completion if isinstance(m, dict))
    return str(completion)


def final_response(text):
    """The "## Final Response" section when the completion has HuatuoGPT-o1's format exactly once, else None."""
    if text.count("## Final Response\n\n") == 1 and text.count("## Thinking") == 1:
        return _FINAL.search(text).group(1).strip()
    return None


def _no_zero3_init():
    """Under DeepSpeed ZeRO-3, from_pretrained would shard the verifier across processes; it runs whole on each GPU."""
    try:
        from accelerate.state import AcceleratorState, is_initialized
    except ImportError:
        return contextlib.nullcontext()
    plugin = AcceleratorState().deepspeed_plugin if is_initialized() else None
    return plugin.zero3_init_context_manager(enable=False) if plugin is not None else contextlib.nullcontext()


def _verifier():
    global _loaded
    if _loaded is None:
        import torch
        import transformers
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        path = os.environ.get("MEDRL_VERIFIER_MODEL") or VERIFIER
        device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if torch.cuda.is_available() else "cpu")
        tokenizer = AutoTokenizer.from_pretrained(path)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        # Loaded in its final dtype (8 processes each holding a float32 copy of a 3B model would need ~100 GB of RAM);
        # transformers names the argument `dtype` from 4.56, `torch_dtype` before.
        dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
        version = tuple(int(x) for x in re.findall(r"\d+", transformers.__version__)[:2])
        with _no_zero3_init():
            model = AutoModelForSequenceClassification.from_pretrained(path, **{"dtype" if version >= (4, 56) else "torch_dtype": dtype})
        model = model.to(device).eval().requires_grad_(False)
        if model.config.pad_token_id is None:
            model.config.pad_token_id = tokenizer.pad_token_id
        _loaded = (tokenizer, model, device)
    return _loaded


def p_true(responses, references):
    """The verifier's probability that each response agrees with its reference answer."""
    import torch

    tokenizer, model, device = _verifier()
    out = []
    for i in range(0, len(responses), BATCH):
        texts = [TEMPLATE.format(r, a, tokenizer.eos_token) for r, a in zip(responses[i : i + BATCH], references[i : i + BATCH])]
        batch = tokenizer(texts, return_tensors="pt", add_special_tokens=False, max_length=MAX_LENGTH, padding=True, truncation=True).to(device)
        with torch.inference_mode():
            logits = model(**batch).logits.float()
        # Two labels (False, True): softmax; a one-label verifier: sigmoid of its logit.
        probs = logits.softmax(-1)[:, 1] if logits.shape[-1] >= 2 else logits[:, 0].sigmoid()
        out.extend(probs.tolist())
    return out


def medical_verifier(prompts, completions, **kwargs):
    if REFERENCE_COLUMN not in kwargs:
        raise KeyError(f"medical_verifier needs the reference answer in the dataset column {REFERENCE_COLUMN!r}; the rows have {sorted(kwargs)}")
    references = [str(a) for a in kwargs[REFERENCE_COLUMN]]
    texts = [_text(c) for c in completions]
    finals = [final_response(t) for t in texts]
    # Without the format: HuatuoGPT-o1 asks the verifier about "I do not know the answer." (and scores 0.0 under
    # REQUIRE_FORMAT); here the whole completion is compared.
    responses = [f if f is not None else t for f, t in zip(finals, texts)]
    probs = p_true(responses, references)
    return [0.0 if REQUIRE_FORMAT and f is None else (1.0 if p > THRESHOLD else 0.1) for f, p in zip(finals, probs)]
