#!/usr/bin/env bash
# Prepares what the tests need to run verl's own code on launch lines (standins/verl_code_check.py), idempotent:
#   .tools/verl-venv     Python 3 venv with verl's imports (torch for CPU, ray, transformers, datasets, pyarrow, pandas), and
#                        TRL with accelerate: the real TRL runs of test/integration/runs/trl-real.test.ts
#   .tools/verl-pylibs   shared/verl/pylibs (Hydra 1.3.2, omegaconf 2.3.0, ANTLR 4.9.3 runtime) with Hydra's override
#                        grammar generated: shared/ holds hydra/grammar/gen empty. Debian's ANTLR tool is 4.7.2; its
#                        Python target writes the same serialized ATN (version 3) that the 4.9.3 runtime reads, so the
#                        generated files' version check is set to the runtime's (it only prints a warning otherwise).
# The verl sources themselves are read in place from shared/verl/versions (MEDRL_VERL_SOURCES to point elsewhere).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
shared="${MEDRL_VERL_SOURCES:-$root/../shared/verl}"
if [ ! -d "$shared/versions" ]; then
  echo "[medrl] no verl sources at $shared (shared/verl): the verl-code tests will say so and fail" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
mkdir -p "$root/.tools"

pylibs="$root/.tools/verl-pylibs"
if [ ! -f "$pylibs/hydra/grammar/gen/OverrideParser.py" ]; then
  if ! command -v antlr4 >/dev/null; then
    echo "[medrl] installing Debian's antlr4 (generates Hydra's override grammar)"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends antlr4 >/dev/null
  fi
  rm -rf "$pylibs.tmp"
  cp -r "$shared/pylibs" "$pylibs.tmp"
  chmod -R u+w "$pylibs.tmp"
  (cd "$pylibs.tmp/hydra/grammar" && antlr4 -Dlanguage=Python3 -o gen -Xexact-output-dir -visitor OverrideLexer.g4 OverrideParser.g4)
  sed -i 's/checkVersion("4\.7\.2")/checkVersion("4.9.3")/' "$pylibs.tmp"/hydra/grammar/gen/*.py
  touch "$pylibs.tmp/hydra/grammar/gen/__init__.py"
  rm -rf "$pylibs" && mv "$pylibs.tmp" "$pylibs"
fi

venv="$root/.tools/verl-venv"
# The agent loop's imports too (cachetools, peft, aiohttp, fastapi, uvicorn): test/integration/runs/agent-loop.test.ts.
wheels=(trl accelerate torch torchdata pydantic pyzmq pillow ray transformers datasets pyarrow pandas numpy orjson packaging cachetools peft aiohttp fastapi uvicorn)
imports='import trl, accelerate, torch, torchdata, pydantic, zmq, PIL, ray, transformers, datasets, pyarrow, pandas, cachetools, peft, aiohttp, fastapi, uvicorn'
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "$imports" 2>/dev/null; then
  echo "[medrl] installing verl's imports into .tools/verl-venv (torch for CPU, ray, transformers, datasets, pyarrow)"
  python3 -m venv "$venv"
  # A package index on this machine, where there is one: it alone (the public index cannot be reached from here).
  if [ -d /opt/pypi/simple ]; then export PIP_INDEX_URL=file:///opt/pypi/simple; fi
  # pip warns of every local index folder a package is not in: not worth a screenful.
  "$venv/bin/pip" install -q --disable-pip-version-check "${wheels[@]}" 2>&1 | { grep -v 'is ignored: it is neither' || true; }
  "$venv/bin/python" -c "$imports"
fi
echo "[medrl] verl check ready: .tools/verl-venv, .tools/verl-pylibs"
