#!/usr/bin/env bash
# The GPU harness (not run in CI): submits real TRL jobs through the `medrl` CLI to this machine's `local` host, waits for
# them, captures what `medrl runs|metrics|checkpoints|episodes` say, and checks it against what TRL wrote
# (test/gpu/check_results.py; trainer_state.json is the ground truth per step). See test/gpu/README.md.
#
#   bash test/gpu/run.sh [WORK_DIR]        # default /tmp/medrl-gpu; results in $OUT if set, else WORK_DIR/results
#
# Specs: SFT (a data file), GRPO with a reward function (a folder), GRPO with a reward model (a data file), DPO (a folder),
# GRPO+LoRA (a data file), then SFT resumed from the first SFT run's checkpoint-4.
# On a machine without a GPU (npm test's test/integration/runs/trl-real.test.ts), MEDRL_HARNESS_CPU=1 asks for no GPU
# and adds TRL's `use_cpu: true` and `bf16: false` to every spec; MEDRL_HARNESS_RUNS names the runs to submit (default
# all six; sft-resume needs sft).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mkdir -p "${1:-/tmp/medrl-gpu}" && cd "${1:-/tmp/medrl-gpu}" && pwd)
out=${OUT:-$work/results}
mkdir -p "$out"
source "$here/env.sh"

command -v node >/dev/null 2>&1 || { echo "run.sh: no node on PATH and no .gpu/node.xz" >&2; exit 2; }
[ -n "$cli" ] || { echo "run.sh: no built CLI: run 'npm run build' (dist/cli.js)" >&2; exit 2; }
echo "run.sh: CLI $cli, node $(node --version), trl $(command -v trl)"

[ -f "$work/tiny/policy/config.json" ] || python3 "$here/make_tiny_models.py" "$work/tiny" || exit 1
tiny=$work/tiny
ws=$work/ws
rm -rf "$ws" && mkdir -p "$ws/configs" "$ws/rewards"
cp "$here/rewards/pubmedqa_answer.py" "$ws/rewards/"
cd "$ws" || exit 1

# WORK_DIR/ws is made anew. The local host's jobs get what this shell has: TRL on PYTHONPATH (pylibs) and `trl` on PATH. Values are JSON strings,
# which YAML reads as they are.
q() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
cat > medrl.yaml <<EOF
version: 1
hosts:
  local:
    runsDir: $(q "$ws/runs")
    setup:
      - $(q "export PATH=$(printf %q "$PATH")")
      - $(q "export PYTHONPATH=$(printf %q "${PYTHONPATH:-}")")
    env: { HF_HUB_OFFLINE: "1", HF_DATASETS_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1", WANDB_MODE: disabled }
defaults: { host: local, scheduler: ssh }
EOF
# This script wrote the workspace: trust it, so the CLI runs its setup lines (medrl trust, docs/security.md).
medrl trust "$ws" > /dev/null || exit 1

gpus=1 cpu_over=
if [ -n "${MEDRL_HARNESS_CPU:-}" ]; then gpus=0; cpu_over=$'  use_cpu: true\n  bf16: false'; fi
spec() { # NAME ALGORITHM DATA [EXTRA YAML] [EXTRA OVERRIDES]: a spec on the local host, one GPU (or none), a few steps
  local steps=6 save=3 batch=8
  [ "$2" = sft ] && { steps=8; save=4; batch=4; }
  cat > "configs/$1.yaml" <<EOF
name: gpu-$1
framework: trl
algorithm: $2
host: local
scheduler: ssh
model: $(q "$tiny/policy")
data:
  train: $(q "$3")
resources: { nodes: 1, gpusPerNode: $gpus }
${4:-}
overrides:
  max_steps: $steps
  save_steps: $save
  logging_steps: 1
  per_device_train_batch_size: $batch
  learning_rate: 1.0e-4
  seed: 42
${cpu_over}
${5:-}
EOF
}
grpo_extra='rollout: { engine: hf, n: 4 }'
grpo_over='  max_completion_length: 32'
spec sft sft "$tiny/data/sft/train.jsonl" '' '  max_length: 256
  eval_strategy: steps
  eval_steps: 4
  test_split_size: 0.2'
spec grpo-fn grpo "$tiny/data/grpo" "$grpo_extra
reward: { path: rewards/pubmedqa_answer.py, function: answer_match }" "$grpo_over"
spec grpo-rm grpo "$tiny/data/grpo/train.jsonl" "$grpo_extra
reward: { model: $(q "$tiny/reward-model") }" "$grpo_over"
spec dpo dpo "$tiny/data/dpo" '' '  max_length: 256'
spec grpo-lora grpo "$tiny/data/grpo/train.jsonl" "$grpo_extra
reward: { path: rewards/pubmedqa_answer.py, function: answer_match }
lora: { rank: 8, alpha: 16 }" "$grpo_over"

cli_out=$out/cli
rm -rf "$cli_out" && mkdir -p "$cli_out"
submit() { # NAME: dry run, then the real submit; the run's id goes to cli/ids
  medrl submit "configs/$1.yaml" --dry-run > "$cli_out/dry-run-$1.txt" 2>&1 || { echo "dry run of $1 failed:"; cat "$cli_out/dry-run-$1.txt"; return 1; }
  medrl submit "configs/$1.yaml" --json > "$cli_out/submit-$1.json" 2> "$cli_out/submit-$1.err" || { echo "submit of $1 failed:"; cat "$cli_out/submit-$1.err"; return 1; }
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(sys.argv[2], r["id"], r["dir"])' "$cli_out/submit-$1.json" "$1" >> "$cli_out/ids"
}
run_dir() { awk -v n="$1" '$1 == n { print $3 }' "$cli_out/ids"; }
ended() { [ -f "$(run_dir "$1")/exit_code" ]; }
wait_for() { # NAME...: until each has an exit_code (job.sh writes it), at most MEDRL_GPU_WAIT seconds
  local deadline=$((SECONDS + ${MEDRL_GPU_WAIT:-420})) n
  for n in "$@"; do
    while [ -n "$(run_dir "$n")" ] && ! ended "$n"; do
      [ $SECONDS -lt $deadline ] || { echo "run.sh: $n did not end in time"; return 1; }
      sleep 3
    done
  done
}

: > "$cli_out/ids"
runs=" ${MEDRL_HARNESS_RUNS:-sft grpo-fn grpo-rm dpo grpo-lora sft-resume} "
for n in sft grpo-fn grpo-rm dpo grpo-lora; do [[ $runs == *" $n "* ]] && submit "$n"; done
wait_for sft
if [[ $runs == *" sft-resume "* ]] && ended sft; then
  # "Resume from checkpoint": a new run whose overrides name the checkpoint (trlTrainer.resumeOverrides).
  spec sft-resume sft "$tiny/data/sft/train.jsonl" '' "  max_length: 256
  eval_strategy: steps
  eval_steps: 4
  test_split_size: 0.2
  resume_from_checkpoint: $(q "$(run_dir sft)/output/checkpoint-4")"
  submit sft-resume
fi
wait_for sft grpo-fn grpo-rm dpo grpo-lora sft-resume

bash "$here/recheck.sh" "$ws" "$out"
