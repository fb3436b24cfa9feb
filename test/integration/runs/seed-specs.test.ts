import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../cli/run-cli';
import { ROOT } from './run-fixture';

/**
 * Problems a host without the seed projects is allowed to report: their data, model, scripts, working folder, setup lines,
 * trainer, GPUs and scheduler are not here. Anything else (a trainer key verl or TRL would refuse, a missing reward file,
 * a reward that breaks the trainer's contract) is a defect of the shipped spec.
 */
const NEEDS_THE_SEED = new Set([
  'data.train',
  'data.val',
  'model',
  'workdir',
  'setup',
  'framework',
  'resources.gpusPerNode',
  'scheduler',
  'entry.script',
  'entry.accelerateConfig',
]);

const specs = readdirSync(join(ROOT, 'configs')).filter((f) => f.endsWith('.yaml'));

describe('every shipped run spec dry-runs to a launch script a real trainer accepts', () => {
  const ws = mkdtempSync(join(tmpdir(), 'medrl-seed-specs-'));
  cpSync(join(ROOT, 'configs'), join(ws, 'configs'), { recursive: true });
  // The DiagAgent spec puts its two model servers on nodes of their own: a workspace of that project names them.
  writeFileSync(
    join(ws, 'medrl.yaml'),
    `version: 1\nhosts:\n  local:\n    runsDir: ${join(ws, 'runs')}\n  gpu-node-2: {}\n  gpu-node-3: {}\ndefaults:\n  host: local\n`,
  );

  for (const file of specs) {
    it(file, async () => {
      const r = await run(['submit', `configs/${file}`, '--dry-run', '--host', 'local', '--json'], ws);
      assert.ok(r.out.trim(), `no output: ${r.err}`);
      const dry = JSON.parse(r.out) as { launchScript: string; problems: Array<{ field?: string; message: string; severity: string }> };
      // The seed's model servers are not running here (nor are their nodes).
      const defects = dry.problems.filter((p) => !NEEDS_THE_SEED.has(p.field ?? '') && !/^services\.\w+(\.host)?$/.test(p.field ?? ''));
      assert.deepEqual(defects, [], `${file}: problems that are not about the seed's own files`);
      assert.match(dry.launchScript, /^exec /m, 'the launch script starts the trainer');
    });
  }
});
