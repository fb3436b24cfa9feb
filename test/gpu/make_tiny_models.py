"""Builds, offline, what the GPU harness trains: a tiny random policy, a tiny reward model and TRL-format datasets.

    python3 test/gpu/make_tiny_models.py OUT_DIR

OUT_DIR/
  policy/        Qwen2ForCausalLM (2 layers, hidden 128) + byte-level BPE tokenizer with a ChatML chat_template
  reward-model/  Qwen2ForSequenceClassification, num_labels=1 (what `trl grpo --reward_model_name_or_path` loads)
  data/sft/      train.jsonl + test.jsonl: {"messages": [user, assistant]}
  data/grpo/     train.jsonl: {"prompt": [user], "answer": "yes|no|maybe"} (the answer reaches reward functions as a kwarg)
  data/dpo/      train.jsonl: {"prompt": [user], "chosen": [assistant], "rejected": [assistant]}

Datasets are folders because `datasets.load_dataset(PATH)` takes a folder or a hub id, never the path of one file
(datasets 4.8.0, load.py). The text is the demo's PubMedQA sample (demo/data/pubmedqa, MIT). Weights are random: the
trainer, its logs, checkpoints and completion dumps are exactly real, only the answers are noise.
"""

import json
import sys
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import GenerationConfig, PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM, Qwen2ForSequenceClassification

ROOT = Path(__file__).resolve().parents[2]
PUBMEDQA = ROOT / 'demo' / 'data' / 'pubmedqa' / 'ori_pqal-first200.json'
SPECIAL = ['<|endoftext|>', '<|im_start|>', '<|im_end|>']
# ChatML as Qwen2.5 writes it, without the tool-calling branches.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
ANSWERS = ['yes', 'no', 'maybe']


def rows():
    data = json.loads(PUBMEDQA.read_text())
    for pmid, r in data.items():
        yield {'pmid': pmid, 'question': r['QUESTION'], 'contexts': r['CONTEXTS'], 'long_answer': r['LONG_ANSWER'], 'answer': r['final_decision']}


def build_tokenizer(texts):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=4096, min_frequency=2, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token='<|im_end|>', pad_token='<|endoftext|>')
    fast.chat_template = CHAT_TEMPLATE
    return fast


def config_for(tok, **extra):
    return Qwen2Config(
        vocab_size=len(tok), hidden_size=128, intermediate_size=352, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=2048, tie_word_embeddings=True,
        eos_token_id=tok.convert_tokens_to_ids('<|im_end|>'), pad_token_id=tok.pad_token_id, **extra,
    )


def write_jsonl(path: Path, items):
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open('w') as f:
        for item in items:
            f.write(json.dumps(item) + '\n')


def user(text):
    return {'role': 'user', 'content': text}


def assistant(text):
    return {'role': 'assistant', 'content': text}


def main(out: Path):
    torch.manual_seed(0)
    data = list(rows())
    texts = [t for r in data for t in (r['question'], r['long_answer'], *r['contexts'])]
    tok = build_tokenizer(texts)

    policy = Qwen2ForCausalLM(config_for(tok))
    policy.generation_config = GenerationConfig(eos_token_id=policy.config.eos_token_id, pad_token_id=tok.pad_token_id)
    policy.save_pretrained(out / 'policy')
    tok.save_pretrained(out / 'policy')

    reward = Qwen2ForSequenceClassification(config_for(tok, num_labels=1))
    reward.save_pretrained(out / 'reward-model')
    tok.save_pretrained(out / 'reward-model')

    question = lambda r: f"{r['question']} Answer yes, no or maybe."
    sft = [{'messages': [user(question(r)), assistant(f"{r['answer']}. {r['long_answer']}")]} for r in data]
    write_jsonl(out / 'data' / 'sft' / 'train.jsonl', sft[:64])
    write_jsonl(out / 'data' / 'sft' / 'test.jsonl', sft[64:80])
    write_jsonl(out / 'data' / 'grpo' / 'train.jsonl', ({'prompt': [user(question(r))], 'answer': r['answer']} for r in data[:64]))
    wrong = lambda a: ANSWERS[(ANSWERS.index(a) + 1) % len(ANSWERS)]
    write_jsonl(out / 'data' / 'dpo' / 'train.jsonl', (
        {'prompt': [user(question(r))], 'chosen': [assistant(f"{r['answer']}. {r['long_answer']}")], 'rejected': [assistant(f"{wrong(r['answer'])}.")]}
        for r in data[:64]
    ))
    print(f'tiny models and data in {out} (vocabulary {len(tok)}, {sum(p.numel() for p in policy.parameters())} parameters)')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: python3 test/gpu/make_tiny_models.py OUT_DIR')
    main(Path(sys.argv[1]).resolve())
