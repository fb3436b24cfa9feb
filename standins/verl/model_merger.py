"""Stand-in for verl's model merger (`python -m verl.model_merger merge ...`, or the legacy `scripts/model_merger.py`).

MedRL Studio's tests and demo use it where verl cannot run (no GPU, no torch). It checks its arguments exactly like verl's
CLI (verl/model_merger/base_model_merger.py; legacy: verl <= 0.3 scripts/model_merger.py), reads the checkpoint layout verl
writes (actor/model_world_size_W_rank_r.pt + fsdp_config.json, or dist_ckpt/ for Megatron) and writes a HuggingFace folder
layout with tiny files: config.json, generation_config.json, model.safetensors (a valid, empty safetensors file), the
tokenizer files, and lora_adapter/ for LoRA runs. Python 3 standard library only.
"""
import argparse
import glob
import json
import os
import re
import shutil
import struct
import sys
import time

STAND_IN = "stand-in verl model merger (MedRL Studio): writes a tiny HuggingFace layout, no real weights"


def parse_args(argv):
    # The same parser as verl's verl/model_merger/base_model_merger.py: argparse exits 2 on anything else.
    parser = argparse.ArgumentParser(description=f"verl model merger [{STAND_IN}]")
    subparsers = parser.add_subparsers(dest="operation", required=True, help="Specify 'merge' or 'test' operation.")
    base = argparse.ArgumentParser(add_help=False)
    base.add_argument("--backend", type=str, required=True, choices=["fsdp", "megatron"], help="The backend of the model")
    base.add_argument("--local_dir", type=str, required=True, help="Path to the saved model checkpoints")
    base.add_argument("--hf_model_path", type=str, default=None, help="(Deprecated) Path to the original Hugging Face model for config.")
    base.add_argument("--tie-word-embedding", action="store_true", help="Whether to tie word embedding weights (currently only Megatron supported)")
    base.add_argument("--is-value-model", action="store_true", help="Whether the model is a value model (currently only Megatron supported)")
    base.add_argument("--use_cpu_initialization", action="store_true", help="Whether to use CPU initialization for the model.")
    merge = subparsers.add_parser("merge", parents=[base], help="Merge model checkpoints and save.")
    merge.add_argument("--target_dir", default="tmp", type=str, help="Directory to save the merged huggingface model")
    merge.add_argument("--hf_upload_path", default=None, type=str, help="Hugging Face repository ID to upload the model")
    merge.add_argument("--private", action="store_true", help="Whether to upload the model to a private Hugging Face repository")
    test = subparsers.add_parser("test", parents=[base], help="Test merged model against a reference Hugging Face model")
    test.add_argument("--test_hf_dir", type=str, required=True, help="Path to the reference Hugging Face model directory for testing")
    return parser.parse_args(argv)


def parse_legacy_args(argv):
    # verl <= 0.3 scripts/model_merger.py: no subcommand, --hf_model_path required.
    parser = argparse.ArgumentParser(description=f"verl model merger (legacy script) [{STAND_IN}]")
    parser.add_argument("--backend", type=str, required=True, choices=["fsdp", "megatron"], help="The backend of the model")
    parser.add_argument("--tie-word-embedding", action="store_true")
    parser.add_argument("--is-value-model", action="store_true")
    parser.add_argument("--hf_model_path", type=str, required=True, help="A Hugging Face model path to read the config from")
    parser.add_argument("--local_dir", type=str, required=True, help="The path for your saved model")
    parser.add_argument("--target_dir", required=False, default="tmp", type=str)
    parser.add_argument("--hf_upload_path", default=False, type=str)
    parser.add_argument("--test", action="store_true")
    parser.add_argument("--test_hf_dir", type=str, required=False)
    args = parser.parse_args(argv)
    args.operation = "test" if args.test else "merge"
    return args


def fail(msg):
    print(f"error: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def shards(local_dir, backend):
    if backend == "fsdp":
        files = sorted(glob.glob(os.path.join(local_dir, "model_world_size_*_rank_*.pt")))
        if not files:
            fail(f"no FSDP shards (model_world_size_*_rank_*.pt) in {local_dir}")
        world = int(re.search(r"model_world_size_(\d+)_rank_", files[0]).group(1))
        if len(files) != world:
            fail(f"{local_dir}: expected {world} shards, found {len(files)}")
        return files
    dist = os.path.join(local_dir, "dist_ckpt")
    if not os.path.isdir(dist):
        fail(f"no Megatron checkpoint (dist_ckpt/) in {local_dir}")
    return sorted(glob.glob(os.path.join(dist, "*"))) or fail(f"{dist} is empty")


def write_safetensors(path, note):
    header = json.dumps({"__metadata__": {"format": "pt", "stand_in": note}}).encode()
    header += b" " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)


def main(argv):
    legacy = bool(argv) and argv[0] not in ("merge", "test", "-h", "--help")
    args = parse_legacy_args(argv) if legacy else parse_args(argv)
    print(STAND_IN, flush=True)
    print(f"config: backend={args.backend} local_dir={args.local_dir} target_dir={getattr(args, 'target_dir', None)}", flush=True)
    if args.operation != "merge":
        fail("the stand-in merger only merges (operation 'test' needs torch)")
    local_dir = args.local_dir
    if not os.path.isdir(local_dir):
        fail(f"--local_dir {local_dir} does not exist")
    config_dir = args.hf_model_path or os.path.join(local_dir, "huggingface")
    if args.hf_model_path and not legacy:
        print("Warning: --hf_model_path is deprecated and will be removed in a future version.", flush=True)
    if not os.path.isfile(os.path.join(config_dir, "config.json")):
        fail(f"no config.json in {config_dir} (verl saves it in actor/huggingface; older checkpoints need --hf_model_path)")
    files = shards(local_dir, args.backend)
    delay = float(os.environ.get("MEDRL_STANDIN_MERGE_DELAY", "0.05"))
    total = len(files)
    for i, _ in enumerate(files, 1):
        time.sleep(delay)
        print(f"Loading {total} {args.backend.upper()} shards: {int(100 * i / total)}%| {i}/{total}", flush=True)
    target = args.target_dir
    os.makedirs(target, exist_ok=True)
    shutil.copyfile(os.path.join(config_dir, "config.json"), os.path.join(target, "config.json"))
    lora = os.path.join(local_dir, "lora_adapter")
    if os.path.isdir(lora):
        print(f"Saving lora adapter to {os.path.join(target, 'lora_adapter')}", flush=True)
        shutil.copytree(lora, os.path.join(target, "lora_adapter"), dirs_exist_ok=True)
    print(f"Saving model to {target}", flush=True)
    write_safetensors(os.path.join(target, "model.safetensors"), f"merged from {total} {args.backend} shard(s) of {os.path.abspath(local_dir)}")
    if not legacy:
        # New verl saves the generation config and tokenizer from the checkpoint's huggingface/ folder.
        for name in sorted(os.listdir(config_dir)):
            if name == "generation_config.json" or name.startswith("tokenizer") or name in ("vocab.json", "merges.txt", "special_tokens_map.json"):
                shutil.copyfile(os.path.join(config_dir, name), os.path.join(target, name))
        print(f"Saving tokenizer to {target}", flush=True)
    print("Done.", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
