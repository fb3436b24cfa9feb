#!/usr/bin/env bash
# Asks the `medrl` CLI about the finished runs of a harness workspace and checks the answers against what TRL wrote
# (check_results.py). run.sh ends with it; it needs no GPU, so it also re-checks the readers on the committed output:
#
#   mkdir -p /tmp/medrl-gpu/ws && cp -r test/fixtures/trl-real/medrl/{medrl.yaml,configs,runs} /tmp/medrl-gpu/ws/
#   bash test/gpu/recheck.sh /tmp/medrl-gpu/ws /tmp/medrl-gpu/results
#
# (the run records hold their absolute folders, hence /tmp/medrl-gpu/ws). Writes OUT/cli/ (runs, checkpoints, metrics and
# episodes as JSON and as text), OUT/check.txt and OUT/medrl-runs.tgz (the workspace without weights, and cli/).
set -uo pipefail
[ $# -eq 2 ] || { echo 'usage: bash test/gpu/recheck.sh WORKSPACE OUT' >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ws=$(cd "$1" && pwd) || exit 2
out=$(mkdir -p "$2" && cd "$2" && pwd)
work=$(dirname "$ws")
source "$here/env.sh"
[ -n "$cli" ] || { echo "recheck.sh: no built CLI: run 'npm run build' (dist/cli.js)" >&2; exit 2; }
cli_out=$out/cli
mkdir -p "$cli_out"
cd "$ws" || exit 2

# NAME RUN_ID RUN_DIR per run, oldest first; NAME is the spec's name without run.sh's "gpu-" prefix.
python3 - "$ws/runs" > "$cli_out/ids" <<'EOF'
import json, sys
from pathlib import Path
records = sorted((json.loads(p.read_text()) | {'folder': str(p.parent)} for p in Path(sys.argv[1]).glob('*/run.json')), key=lambda r: r['created'])
for r in records:
    print(r['name'].removeprefix('gpu-'), r['id'], r['folder'])
EOF

medrl runs --json > "$cli_out/runs.json" 2> "$cli_out/runs.err"
medrl runs > "$cli_out/runs.txt" 2>&1
medrl checkpoints --json > "$cli_out/checkpoints.json" 2> "$cli_out/checkpoints.err"
while read -r name id dir; do
  medrl metrics "$dir" --host local --json > "$cli_out/metrics-$name.jsonl" 2> "$cli_out/metrics-$name.err"
  medrl metrics "$dir" --host local > "$cli_out/metrics-$name.txt" 2>&1
  if [ -d "$dir/output/completions" ]; then
    medrl episodes "$dir" --host local --json > "$cli_out/episodes-$name.jsonl" 2> "$cli_out/episodes-$name.err"
    medrl episodes "$dir" --host local --step 1 > "$cli_out/episodes-$name-step1.txt" 2>&1
  fi
done < "$cli_out/ids"

python3 "$here/check_results.py" "$cli_out" > "$out/check.txt" 2>&1
status=$?
cat "$out/check.txt"
tar czf "$out/medrl-runs.tgz" -C "$ws" --exclude='*.safetensors' --exclude='*.bin' --exclude='*.pt' --exclude='*.pth' \
  --exclude='tokenizer.json' --exclude='optimizer*' --exclude='scheduler*' --exclude='rng_state*' medrl.yaml configs runs -C "$out" cli check.txt
exit $status
