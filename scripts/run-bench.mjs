// Runs the benchmarks in bench/ (each *.bench.ts prints its figures next to its baseline from the same run).
// `npm run bench` runs all; `npm run bench -- NAME` runs those whose file name contains NAME.
import { readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const filters = process.argv.slice(2);
const files = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no benchmarks in bench/ match ${filters.join(' ') || '*.bench.ts'}`);
  process.exit(1);
}
let failed = 0;
for (const f of files) {
  console.log(`\n[bench] ${f}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join('bench', f)], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, MEDRL_ROOT: root },
  });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
