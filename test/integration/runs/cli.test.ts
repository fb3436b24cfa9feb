import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseDocument } from 'yaml';
import { ROOT, STANDIN_SETUP, adaptExample, makeWorkspace } from './run-fixture';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist/cli.js');

async function medrl(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return medrlWithEnv(cwd, {}, ...args);
}

async function medrlWithEnv(
  cwd: string,
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
    return { code: 0, ...r };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('medrl submit / runs / logs / cancel (the built CLI, each call its own process)', () => {
  it('the demo workspace: --dry-run prints launch.sh and writes nothing; submit runs on the stand-ins; another process lists, follows and finds it', async () => {
    const ws = makeWorkspace();
    const demo = join(ws.dir, 'demo');
    assert.equal((await medrl(ws.dir, 'demo', demo)).code, 0);
    const cfg = parseDocument(readFileSync(join(demo, 'medrl.yaml'), 'utf8'));
    cfg.setIn(['hosts', 'local', 'runsDir'], ws.runsDir);
    writeFileSync(join(demo, 'medrl.yaml'), cfg.toString());
    // The datasets feature ships PubMedQA as verl parquet here; where it has not landed, test rows stand in for it.
    mkdirSync(join(demo, 'data/pubmedqa/verl'), { recursive: true });
    for (const stem of ['train', 'test']) {
      if (existsSync(join(demo, `data/pubmedqa/verl/${stem}.parquet`))) continue;
      writeFileSync(join(demo, `data/pubmedqa/verl/${stem}.parquet`), readFileSync(join(ws.dir, `data/${stem}.parquet`)));
      writeFileSync(join(demo, `data/pubmedqa/verl/${stem}.jsonl`), readFileSync(join(ws.dir, `data/${stem}.jsonl`)));
    }
    const dry = await medrl(demo, 'submit', 'configs/local-demo.yaml', '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^exec python3 -m verl\.trainer\.main_ppo/m);
    assert.match(dry.stdout, /'trainer\.logger=\['\\''console'\\'','\\''file'\\''\]'/);
    assert.equal(existsSync(ws.runsDir), false, 'a dry run writes nothing');

    const sub = await medrl(demo, 'submit', 'configs/local-demo.yaml', '--json');
    assert.equal(sub.code, 0, sub.stderr);
    const record = JSON.parse(sub.stdout) as { id: string; dir: string };
    const logs = await medrl(demo, 'logs', record.id, '--follow');
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /stand-in/);
    assert.match(logs.stdout, /Final validation metrics/);
    const list = await medrl(demo, 'runs', '--json');
    assert.equal(list.code, 0, list.stderr);
    const hosts = JSON.parse(list.stdout) as { host: string; runs: { record: { id: string }; state: string }[] }[];
    assert.equal(hosts[0]!.runs[0]!.record.id, record.id);
    assert.equal(hosts[0]!.runs[0]!.state, 'succeeded');
    const table = await medrl(demo, 'runs');
    assert.match(table.stdout, new RegExp(`${record.id}\\s+succeeded\\s+local\\s+ssh\\s+step \\d+`));
    const cancel = await medrl(demo, 'cancel', record.id.slice(0, -3));
    assert.equal(cancel.code, 1);
    assert.match(cancel.stderr, /is succeeded: nothing to cancel/);
  });

  it('a spec with schema errors is refused with file:line (field) and exit code 1', async () => {
    const ws = makeWorkspace();
    writeFileSync(join(ws.dir, 'medrl.yaml'), `version: 1\nhosts:\n  local:\n    runsDir: ${ws.runsDir}\n`);
    writeFileSync(
      join(ws.dir, 'bad.yaml'),
      'name: x\nframework: verl\nalgorithm: grpo\nmodel: m\ndata: {train: t.parquet}\nrollout: {n: 0}\n',
    );
    const r = await medrl(ws.dir, 'submit', 'bad.yaml');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /bad\.yaml:6:\d+ \(rollout\.n\): error:/);
    assert.match(r.stderr, /bad\.yaml:\d+:\d+ \(reward\): error: grpo needs a reward/);
    assert.equal(existsSync(ws.runsDir) && readdirSync(ws.runsDir).length > 0, false);
  });

  it('medrl submit gives the run MEDRL_JUDGE_* from medrl.yaml, and the judge key and HF_TOKEN from the shell over stdin, in no file', async () => {
    const ws = makeWorkspace();
    const cfg = parseDocument('version: 1\n');
    cfg.setIn(['hosts', 'local'], { runsDir: ws.runsDir, setup: STANDIN_SETUP });
    cfg.setIn(['judges', 'qwen72'], { url: 'http://127.0.0.1:8082/v1', model: 'Judger' });
    writeFileSync(join(ws.dir, 'medrl.yaml'), cfg.toString());
    const { text } = adaptExample('local-demo.yaml', ws, { setup: ['echo "medrl-test key=${#MEDRL_JUDGE_API_KEY} hf=${#HF_TOKEN}"'] });
    writeFileSync(join(ws.dir, 'configs/env.yaml'), text);
    const dry = await medrlWithEnv(ws.dir, { MEDRL_JUDGE_API_KEY: '', HF_TOKEN: '' }, 'submit', 'configs/env.yaml', '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^export MEDRL_JUDGE_URL=http:\/\/127\.0\.0\.1:8082\/v1$/m);
    assert.match(dry.stderr, /warning: judge "qwen72" has no API key here: .*export MEDRL_JUDGE_API_KEY in the shell that runs medrl/);

    const secret = 'sk-cli-7d1e0f';
    const sub = await medrlWithEnv(ws.dir, { MEDRL_JUDGE_API_KEY: secret, HF_TOKEN: 'hf_abcdef' }, 'submit', 'configs/env.yaml', '--json');
    assert.equal(sub.code, 0, sub.stderr);
    const record = JSON.parse(sub.stdout) as { id: string; dir: string };
    const logs = await medrl(ws.dir, 'logs', record.id, '--follow');
    // The secrets are in the job's environment from the start (setup lines run first); the judge's URL is in launch.sh.
    assert.match(logs.stdout, /^medrl-test key=13 hf=9$/m);
    assert.match(
      readFileSync(join(record.dir, 'launch.sh'), 'utf8'),
      /^export MEDRL_JUDGE_URL=http:\/\/127\.0\.0\.1:8082\/v1\nexport MEDRL_JUDGE_MODEL=Judger$/m,
    );
    for (const f of readdirSync(record.dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())) {
      assert.ok(!readFileSync(join(f.parentPath, f.name), 'utf8').includes(secret), `${f.name} holds no key`);
    }
  });
});
