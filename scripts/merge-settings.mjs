// Adds to a VS Code settings.json the keys of a defaults file that it does not set yet (the user's own values win).
// Usage: node scripts/merge-settings.mjs DEFAULTS.json SETTINGS.json
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const [defaultsFile, settingsFile] = process.argv.slice(2);
if (!defaultsFile || !settingsFile) {
  console.error('usage: node scripts/merge-settings.mjs DEFAULTS.json SETTINGS.json');
  process.exit(2);
}
const defaults = JSON.parse(readFileSync(defaultsFile, 'utf8'));
let current = {};
if (existsSync(settingsFile)) {
  const text = readFileSync(settingsFile, 'utf8');
  try {
    current = text.trim() ? JSON.parse(text) : {};
  } catch (err) {
    // settings.json may hold comments (JSONC): leave a file we cannot read as it is rather than lose what is in it.
    console.error(`${settingsFile}: not plain JSON (${err.message}); left as it is, without the demo's defaults`);
    process.exit(0);
  }
}
writeFileSync(settingsFile, `${JSON.stringify({ ...defaults, ...current }, null, 2)}\n`);
