# Sourced by the GPU harness scripts: offline settings, and TRL from .gpu/pylibs when the machine has no TRL installed.
# Needs $root (the repository) and $work (the harness's scratch folder).
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 WANDB_MODE=disabled
if [ -d "$root/.gpu/pylibs" ]; then
  export PYTHONPATH="$root/.gpu/pylibs${PYTHONPATH:+:$PYTHONPATH}"
fi
if ! command -v trl >/dev/null 2>&1; then
  # A stand-in for the console script pip installs with TRL: it calls trl.cli.main (trl 1.10.0.dev0, trl/cli/main.py).
  mkdir -p "$work/bin"
  printf '%s\n' '#!/usr/bin/env bash' \
    'exec python3 -c "import sys; from trl.cli import main; sys.argv[0] = '"'trl'"'; sys.exit(main())" "$@"' > "$work/bin/trl"
  chmod +x "$work/bin/trl"
  export PATH="$work/bin:$PATH"
fi
# Node and the built CLI: the machine's node, else .gpu/node.xz; dist/cli.js, else .gpu/dist/cli.js. Sets $cli.
if ! command -v node >/dev/null 2>&1 && [ -f "$root/.gpu/node.xz" ]; then
  mkdir -p "$work/bin" && xz -dc "$root/.gpu/node.xz" > "$work/bin/node" && chmod +x "$work/bin/node"
  export PATH="$work/bin:$PATH"
fi
cli=
for c in "$root/dist/cli.js" "$root/.gpu/dist/cli.js"; do [ -z "$cli" ] && [ -f "$c" ] && cli=$c; done
medrl() { node "$cli" "$@"; }
