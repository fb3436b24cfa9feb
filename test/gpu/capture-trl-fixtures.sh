#!/usr/bin/env bash
# Runs the real `trl sft|grpo|dpo` directly (no MedRL in between) on tiny offline models and packs what TRL wrote, without
# weights, as trl-real.tgz: the ground truth for test/fixtures/trl-real/ and for the readers' unit tests.
#
#   bash test/gpu/capture-trl-fixtures.sh [WORK_DIR]      # on a GPU machine; the bundle goes to $OUT, else WORK_DIR
#
# MEDRL_GPU_TRL_ARGS adds words to every trl command (`--use_cpu true --bf16 false` tries the script on a CPU);
# MEDRL_GPU_RUN_TIMEOUT bounds each run (seconds, default 200).
#
# Each run folder mimics a MedRL run: launch.sh holds the command, started as job.sh starts it
# (`bash launch.sh > output.log 2>&1 < /dev/null`, src/core/runs/launch-script.ts), TRL output in output/.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mkdir -p "${1:-/tmp/medrl-gpu}" && cd "${1:-/tmp/medrl-gpu}" && pwd)
out=${OUT:-$work}
source "$here/env.sh"
export PYTHONPATH="$here/rewards:$PYTHONPATH"

python3 "$here/make_tiny_models.py" "$work/tiny" || exit 1
m=$work/tiny
runs=$work/runs
rm -rf "$runs" && mkdir -p "$runs"

common=(--logging_steps 1 --report_to none --seed 42 --num_processes 1 ${MEDRL_GPU_TRL_ARGS:-})
grpo=(trl grpo --model_name_or_path "$m/policy" --dataset_name "$m/data/grpo" --log_completions true --num_generations 4
  --per_device_train_batch_size 8 --max_completion_length 32 --learning_rate 1e-4 --max_steps 6 --save_steps 3)
declare -A cmd=(
  [sft]="trl sft --model_name_or_path $m/policy --dataset_name $m/data/sft --max_length 256 --per_device_train_batch_size 4
    --learning_rate 1e-3 --max_steps 8 --save_steps 4 --eval_strategy steps --eval_steps 4"
  [grpo-fn]="${grpo[*]} --reward_funcs pubmedqa_answer.answer_match"
  [grpo-rm]="${grpo[*]} --reward_model_name_or_path $m/reward-model"
  [dpo]="trl dpo --model_name_or_path $m/policy --dataset_name $m/data/dpo --max_length 256 --per_device_train_batch_size 4
    --learning_rate 1e-4 --max_steps 6 --save_steps 3"
  [grpo-lora]="${grpo[*]} --reward_funcs pubmedqa_answer.answer_match --use_peft true --lora_r 8 --lora_alpha 16"
)

start_run() { # NAME COMMAND...: a run folder whose launch.sh runs COMMAND with output_dir in it
  local dir=$runs/$1; shift
  mkdir -p "$dir"
  { printf '#!/usr/bin/env bash\ncd %q\nexec' "$dir"; printf ' %q' "$@" --output_dir "$dir/output" "${common[@]}"; echo; } > "$dir/launch.sh"
  (cd "$dir" && timeout "${MEDRL_GPU_RUN_TIMEOUT:-200}" bash launch.sh > output.log 2>&1 < /dev/null; echo $? > "$dir/exit_code")
}

for name in "${!cmd[@]}"; do start_run "$name" ${cmd[$name]} & done
wait

# Resume: TRL's scripts call trainer.train() with no argument, so is --resume_from_checkpoint read at all?
if [ -d "$runs/sft/output/checkpoint-4" ]; then
  mkdir -p "$runs/sft-resume/output" && cp -r "$runs/sft/output/checkpoint-4" "$runs/sft-resume/output/"
  start_run sft-resume ${cmd[sft]} --resume_from_checkpoint "$runs/sft-resume/output/checkpoint-4"
fi

python3 - "$runs/versions.json" <<'EOF'
import json, platform, subprocess, sys
from importlib.metadata import version
import torch
v = {'python': platform.python_version()}
for p in ('torch', 'transformers', 'accelerate', 'trl', 'datasets', 'peft', 'tokenizers', 'pyarrow', 'rich'):
    try:
        v[p] = version(p)
    except Exception as err:  # recorded, not fatal: the bundle says what was missing
        v[p] = f'missing: {err}'

v['cuda'] = torch.version.cuda
smi = subprocess.run(['nvidia-smi', '--query-gpu=name,driver_version,memory.total', '--format=csv,noheader'], capture_output=True, text=True)
v['gpu'] = smi.stdout.strip()
json.dump(v, open(sys.argv[1], 'w'), indent=2)
print(json.dumps(v))
EOF

for d in "$runs"/*/; do
  (cd "$d" && find . -type f -printf '%s %P\n' | sort -k2 > files.txt)
  printf '%s exit %s, %s steps logged\n' "$(basename "$d")" "$(cat "$d/exit_code")" "$(grep -c "{'loss'\|{'train_runtime'" "$d/output.log")"
done
cp "$m/policy/config.json" "$runs/tiny-policy-config.json"
cp "$m/reward-model/config.json" "$runs/tiny-reward-model-config.json"
tar czf "$out/trl-real.tgz" -C "$work" --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' --exclude='*.pth' \
  --exclude='tokenizer.json' --exclude='optimizer*' --exclude='scheduler*' --exclude='rng_state*' runs
ls -la "$out/trl-real.tgz"
for d in "$runs"/*/; do [ "$(cat "$d/exit_code")" = 0 ] || { echo "FAILED: $d"; tail -40 "$d/output.log"; }; done
