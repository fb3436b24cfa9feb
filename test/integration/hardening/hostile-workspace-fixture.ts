import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A repository crafted to run code and read files outside itself through everything MedRL Studio reads: medrl.yaml
 * (runsDir, hosts, setup lines, env, judges, dataset roots), run specs, run folders (run.json saying Ray next to a
 * setup.sh, a fake `ray`, shell in folder names and job ids), symlinks out of the workspace, and dataset/episode contents
 * (terminal escape codes, HTML, a huge line). Each attack that runs code creates its own file in `canaries`; every file
 * outside the workspace holds SECRET, so any output or upload that contains it read outside the workspace.
 */
export interface HostileWorkspace {
  dir: string;
  runsDir: string;
  outside: string;
  canaries: string;
  secret: string;
  /** Attack name → what it tries, for the figure and the report. */
  attacks: Map<string, string>;
  /** The attacks whose code ran: their canary files (anywhere in the workspace or the canary folder). */
  executed(): string[];
}

export function makeHostileWorkspace(): HostileWorkspace {
  const root = mkdtempSync(join(tmpdir(), 'medrl-hostile-'));
  const dir = join(root, 'repo');
  const outside = join(root, 'home-of-the-user');
  const canaries = join(root, 'canaries');
  for (const d of [dir, outside, canaries]) mkdirSync(d);
  const secret = `MEDRL-OUTSIDE-SECRET-${Math.random().toString(36).slice(2)}`;
  const attacks = new Map<string, string>();
  const touch = (name: string, what: string) => {
    attacks.set(name, what);
    return `touch ${join(canaries, name)}`;
  };
  const w = (rel: string, text: string) => {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };

  // What the user has outside the repository: a key, and rows that read as a dataset and as episodes.
  writeFileSync(join(outside, 'id_ed25519'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${secret}\n`);
  writeFileSync(
    join(outside, 'rows.jsonl'),
    `${JSON.stringify({ prompt: [{ role: 'user', content: secret }], response: secret, score: 1, step: 1, data_source: secret, reward_model: { ground_truth: secret } })}\n`,
  );
  writeFileSync(
    join(outside, 'reward.py'),
    `# ${secret}\nimport os\nos.system(${JSON.stringify(touch('outside-reward-import', 'a reward file linked from outside the workspace, imported'))})\ndef compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 0.0\n`,
  );
  mkdirSync(join(outside, 'runs/stolen-run'), { recursive: true });
  writeFileSync(join(outside, 'runs/stolen-run/output.log'), `${secret}\n`);

  const runsDir = join(dir, 'runs');
  // A `ray` the repository ships, first on a PATH its medrl.yaml sets.
  w('bin/ray', `#!/bin/sh\n${touch('repo-ray-on-path', 'a `ray` in the repository, put on PATH by medrl.yaml env')}\n`);
  w(
    'medrl.yaml',
    [
      'version: 1',
      'hosts:',
      '  local:',
      `    runsDir: ${JSON.stringify(runsDir)}`,
      `    workdir: ${JSON.stringify(`$(${touch('config-workdir', 'shell in medrl.yaml workdir')})`)}`,
      '    setup:',
      `      - ${JSON.stringify(touch('config-host-setup', 'medrl.yaml host setup line'))}`,
      '    env:',
      `      PATH: ${JSON.stringify(`${join(dir, 'bin')}:/usr/bin:/bin`)}`,
      `      BASH_ENV: ${JSON.stringify(join(dir, 'bashenv.sh'))}`,
      `      PROMPT_COMMAND: ${JSON.stringify(touch('config-env-prompt', 'PROMPT_COMMAND in medrl.yaml env'))}`,
      '  evil:',
      `    ssh: ${JSON.stringify(`-oProxyCommand=${touch('config-ssh-alias', 'an ssh alias that is an ssh option')}`)}`,
      `    runsDir: ${JSON.stringify(`$(${touch('config-runsdir', 'shell in a runsDir')})`)}`,
      'judges:',
      '  j:',
      '    url: http://127.0.0.1:9/v1',
      `    model: ${JSON.stringify(`$(${touch('config-judge-model', 'shell in a judge model name')})`)}`,
      'datasets:',
      `  - path: ${JSON.stringify(outside)}`,
      '    label: the user home',
      '  - path: data',
      '',
    ].join('\n'),
  );
  w('bashenv.sh', `${touch('config-bash-env', 'BASH_ENV in medrl.yaml env')}\n`);
  attacks.set('config-dataset-root-outside', 'a dataset root outside the workspace (the user home)');

  // Run folders: Ray's (run.json + setup.sh + its own ray), Slurm's with shell in the job id, an ssh one with pid 1.
  const record = (id: string, extra: Record<string, unknown>) =>
    JSON.stringify({
      id,
      name: id,
      kind: 'train',
      framework: 'verl',
      algorithm: 'grpo',
      host: 'local',
      scheduler: 'ssh',
      created: '2026-01-01T00:00:00Z',
      dir: join(runsDir, id),
      ...extra,
    });
  w('runs/evil-ray/run.json', record('evil-ray', { scheduler: 'ray', jobId: 'evil-ray' }));
  w(
    'runs/evil-ray/setup.sh',
    `${touch('run-folder-ray-setup', 'setup.sh of a run folder whose run.json says Ray')}\nexport PATH=${join(dir, 'runs/evil-ray/bin')}:$PATH\n`,
  );
  w('runs/evil-ray/bin/ray', `#!/bin/sh\n${touch('run-folder-ray-bin', 'a `ray` inside a Ray run folder')}\n`);
  w(
    'runs/evil-slurm/run.json',
    record('evil-slurm', { scheduler: 'slurm', jobId: `1;${touch('run-json-jobid', 'shell in a Slurm job id')}` }),
  );
  w(
    'runs/evil-pid/run.json',
    record('evil-pid', {
      pid: 1,
      pgid: 1,
      name: `\u001b]52;c;${Buffer.from('rm -rf ~').toString('base64')}\u0007<img src=x onerror=alert(1)>`,
    }),
  );
  w('runs/evil-pid/output.log', `step:1 - \u001b[2J\u001b]0;owned\u0007 loss:1\n${'A'.repeat(3 << 20)}\n`);
  w(
    'runs/evil-svc/run.json',
    record('evil-svc', {
      kind: 'service',
      pid: 1,
      service: {
        port: 9,
        model: `$(${touch('run-json-service-model', 'shell in a service model')})`,
        name: `svc;${touch('run-json-service-name', 'shell in a service name')}`,
      },
    }),
  );
  // A folder name that is shell, and one linked out of the workspace.
  attacks.set('run-folder-name', 'shell in a run folder name');
  const shellName = join(runsDir, 'a$(touch${IFS}run-folder-name)');
  mkdirSync(shellName);
  writeFileSync(join(shellName, 'run.json'), record('a', {}));
  symlinkSync(join(outside, 'runs/stolen-run'), join(runsDir, 'stolen-run'));
  attacks.set('run-folder-symlink-out', 'a run folder that is a link to a folder outside the workspace');

  // Folders the listing must never remove (long past its one-minute sweep): an empty one (a mount point), and one dressed
  // as an interrupted submit's, with a marker the repository forged.
  mkdirSync(join(runsDir, 'empty-mount'));
  mkdirSync(join(runsDir, 'forged-cut'));
  writeFileSync(join(runsDir, 'forged-cut/.medrl-run'), 'deadbeef'.repeat(4));
  writeFileSync(join(runsDir, 'forged-cut/run.json.tmp'), '{"id":');
  const past = new Date(Date.now() - 600_000);
  for (const d of ['empty-mount', 'forged-cut']) utimesSync(join(runsDir, d), past, past);
  attacks.set('listing-deletes-folders', 'empty folders and a forged interrupted-submit folder in runsDir, for the sweep to remove');
  // Run folders that would block or flood the listing, or show a file outside: FIFOs, a 100 MB run.json, a linked run.json.
  for (const [id, file] of [
    ['fifo-log', 'output.log'],
    ['fifo-exit', 'exit_code'],
  ] as const) {
    w(`runs/${id}/run.json`, record(id, {}));
    execFileSync('mkfifo', [join(runsDir, id, file)]);
  }
  w('runs/huge-json/run.json', '');
  truncateSync(join(runsDir, 'huge-json/run.json'), 100 << 20);
  mkdirSync(join(runsDir, 'linked-json'));
  symlinkSync(join(outside, 'id_ed25519'), join(runsDir, 'linked-json/run.json'));
  attacks.set('run-folder-fifo-huge-link', 'FIFOs named output.log and exit_code, a 100 MB run.json, a run.json linked to a key outside');

  // Episodes and datasets: escape codes (OSC 52 writes the clipboard), HTML, a 3 MiB line, and links to the user's rows.
  const episode = (step: number, text: string) =>
    JSON.stringify({ input: `<script>alert(1)</script>\u001b]52;c;aGk=\u0007`, output: text, score: 1, step, gts: 'x' });
  w(
    'runs/evil-pid/rollouts/1.jsonl',
    `${episode(1, `\u001b[31mred\u001b[0m\u001b]8;;http://evil/\u0007link\u001b]8;;\u0007 <img src=x onerror=alert(1)>`)}\n${episode(1, 'B'.repeat(3 << 20))}\n`,
  );
  symlinkSync(join(outside, 'rows.jsonl'), join(runsDir, 'evil-pid/rollouts/2.jsonl'));
  attacks.set('episode-contents', 'escape codes, HTML and a 3 MiB line in rollout dumps');
  attacks.set('episode-symlink-out', 'a rollout dump linked to rows outside the workspace');
  w(
    'data/evil.jsonl',
    `${JSON.stringify({ prompt: [{ role: 'user', content: '\u001b]52;c;aGk=\u0007<script>alert(1)</script>' }], data_source: '\u001b[2J', reward_model: { ground_truth: 'x' } })}\n`,
  );
  symlinkSync(join(outside, 'rows.jsonl'), join(dir, 'data/linked.jsonl'));
  attacks.set('dataset-contents', 'escape codes and HTML in dataset rows');
  attacks.set('dataset-symlink-out', 'a dataset file linked to rows outside the workspace');

  // A run spec: shell in every field that reaches a launch script, its reward a link out of the workspace.
  symlinkSync(join(outside, 'reward.py'), join(dir, 'configs-reward-link.py'));
  w('configs/rewards/ok.py', 'def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n    return 0.0\n');
  w(
    'configs/evil.yaml',
    [
      `name: ${JSON.stringify(`evil$(${touch('spec-name', 'shell in a spec name')})`)}`,
      'framework: verl',
      'algorithm: grpo',
      'host: local',
      `model: ${JSON.stringify(`$(${touch('spec-model', 'shell in a spec model')})`)}`,
      'data:',
      `  train: ${JSON.stringify(`data/evil.jsonl; ${touch('spec-data', 'shell in a data path')}`)}`,
      'reward:',
      '  path: configs-reward-link.py',
      '  function: compute_score',
      'env:',
      `  MEDRL_X: ${JSON.stringify(`$(${touch('spec-env', 'shell in a spec env value')})`)}`,
      'overrides:',
      `  trainer.project_name: ${JSON.stringify(`'; ${touch('spec-override', 'shell in an override value')} #`)}`,
      '',
    ].join('\n'),
  );
  attacks.set('spec-reward-symlink-out', 'a reward file linked to a file outside the workspace (would be uploaded)');

  const executed = () => {
    const found = new Set(readdirSync(canaries));
    // Shell in a folder name runs with the runs folder as its working directory: its canary lands there.
    const walk = (d: string) => {
      for (const e of readdirSync(d)) {
        const p = join(d, e);
        if (attacks.has(e)) found.add(e);
        else if (statSync(p, { throwIfNoEntry: false })?.isDirectory() && !p.startsWith(outside)) walk(p);
      }
    };
    walk(dir);
    return [...found];
  };
  return { dir, runsDir, outside, canaries, secret, attacks, executed };
}

/** Whether `text` holds anything of the files outside the workspace. */
export function leaks(h: HostileWorkspace, text: string): boolean {
  return text.includes(h.secret);
}

export function readIfExists(p: string): string {
  return existsSync(p) ? readFileSync(p, 'utf8') : '';
}
