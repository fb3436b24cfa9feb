#!/usr/bin/env bash
# Installs everything MedRL Studio's demo and tests need on a fresh Debian/Ubuntu machine (idempotent):
# system packages (OpenSSH server, Slurm + munge, Chromium, python3, iproute2 for the two-node tests, headers for
# code-server's native modules),
# the npm dependencies, and code-server (real VS Code for the browser) with the Node 24 it runs on.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

packages=(openssh-server openssh-client slurm-wlm munge chromium python3 git ca-certificates
          libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev fonts-dejavu-core procps iproute2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "[medrl] installing system packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[medrl] installing npm dependencies"
  npm ci --no-audit --no-fund
fi
# A package index on this machine, where there is one: it alone (the public index cannot be reached from here).
if [ -d /opt/pypi/simple ]; then export PIP_INDEX_URL=file:///opt/pypi/simple; fi
# Real Ray for the Ray-on-Slurm port test.
python3 -c 'import ray' 2>/dev/null || python3 -m pip install -q ray 2>&1 | { grep -v 'is ignored: it is neither' || true; }
# verl's own code for the verl launch-line tests: a venv with its imports, Hydra with its grammar generated.
bash scripts/setup-verl-check.sh
bash scripts/install-code-server.sh
echo "[medrl] setup done"
