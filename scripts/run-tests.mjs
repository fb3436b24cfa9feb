// Runs the test suites with node's test runner (TypeScript through tsx):
// `unit` (test/core, test/cli), `integration` (real sshd, Slurm, python3), `e2e` (packaged extension in code-server + Chromium),
// `quick` (unit and integration less the slow tiers: SLOW).
// With no argument (CI's `npm test`) it first runs ESLint and the Prettier check, then all three suites.
// Extra arguments after the suite name filter files by substring.
import { mkdtempSync, readdirSync, realpathSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [suiteArg, ...filters] = process.argv.slice(2);
const SUITES = { unit: ['core', 'cli'], integration: ['integration'], e2e: ['e2e'], quick: ['core', 'cli', 'integration'] };
// `quick`, a developer's inner loop: unit and integration without the slow real-component tiers below (real TRL runs,
// two-node Slurm and Ray, verl's own code, the memory and corpus runs), which `npm test` and CI always run.
const SLOW = [
  'runs/trl-real',
  'runs/slurm-two-nodes',
  'runs/ray-node-files',
  'runs/ray-on-slurm-ports',
  'runs/verl-code',
  'runs/agent-loop',
  'runs/medec-selfplay',
  'hardening/memory',
  'hardening/malformed-corpus',
];
if (suiteArg && !(suiteArg in SUITES)) {
  console.error(`unknown suite "${suiteArg}": one of ${Object.keys(SUITES).join(', ')}`);
  process.exit(2);
}
const suites = suiteArg ? [suiteArg] : ['unit', 'integration', 'e2e'];

function testFiles(dir) {
  let out = [];
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries.sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(testFiles(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = suites
  .flatMap((s) => SUITES[s].flatMap((d) => testFiles(join(root, 'test', d))))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .filter((f) => suiteArg !== 'quick' || !SLOW.some((x) => f.includes(`/${x}.test.ts`)));
if (files.length === 0) {
  console.error(`no test files for ${suites.join(', ')} ${filters.join(' ')}`);
  process.exit(1);
}
if (!suiteArg) {
  for (const script of ['lint', 'format:check']) {
    console.log(`[test] npm run ${script}`);
    const c = spawnSync('npm', ['run', '--silent', script], { cwd: root, stdio: 'inherit' });
    if (c.status !== 0) {
      console.error(`[test] npm run ${script} failed${script === 'format:check' ? ': `npm run format` rewrites the files' : ''}`);
      process.exit(c.status ?? 1);
    }
  }
}
console.log(`[test] ${files.length} file(s): ${suites.join(', ')}`);
const needsBuild = suites.some((s) => s !== 'unit');
if (needsBuild) {
  const b = spawnSync('npm', ['run', 'package'], { cwd: root, stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}
// The tests' workspaces (temporary folders, this checkout) are trusted in a config folder of their own, as `medrl trust`
// records it: the CLI runs their setup lines. A test of trust itself points XDG_CONFIG_HOME elsewhere.
const config = mkdtempSync(join(tmpdir(), 'medrl-test-config-'));
mkdirSync(join(config, 'medrl'));
writeFileSync(
  join(config, 'medrl', 'trusted-workspaces.json'),
  JSON.stringify({ version: 1, folders: [realpathSync(tmpdir()), realpathSync(root)] }),
);
const r = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=1',
    '--test-force-exit',
    '--test-reporter=spec',
    ...files.map((f) => relative(root, f)),
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, MEDRL_ROOT: root, XDG_CONFIG_HOME: config },
  },
);
process.exit(r.status ?? 1);
