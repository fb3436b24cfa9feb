/**
 * What `medrl runs` and every Runs view refresh may do to a runs folder, through the real listing script on this
 * machine's /bin/sh: remove only what MedRL made and can prove it made, and never let one crafted run folder (a FIFO, a
 * 100 MB run.json, a link to a secret) hide the others, block the listing or print another file's bytes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { listRuns } from '../../../src/core/runs/list-runs';
import { createRunFolder } from '../../../src/core/runs/submit-run';
import { RUN_FILES, type RunRecord } from '../../../src/core/runs/run-record';

const host = new LocalHost();
const past = new Date(Date.now() - 300_000);
const age = (...paths: string[]) => paths.forEach((p) => utimesSync(p, past, past));

function record(runsDir: string, id: string): RunRecord {
  return {
    id,
    name: id,
    kind: 'train',
    framework: 'verl',
    algorithm: 'grpo',
    host: 'local',
    scheduler: 'ssh',
    created: past.toISOString(),
    dir: join(runsDir, id),
  };
}

const problemsOf = (listing: Awaited<ReturnType<typeof listRuns>>, runsDir: string) =>
  Object.fromEntries(listing.problems.map((p) => [p.file!.slice(runsDir.length + 1), p.message]));

describe('listing a runs folder removes only what MedRL made', () => {
  it('a folder MedRL did not make (a data folder, empty mount points) keeps every empty sub-folder', async () => {
    const data = mkdtempSync(join(tmpdir(), 'medrl-not-runs-'));
    for (const d of ['scratch', 'mnt-a', 'mnt-b']) mkdirSync(join(data, d));
    writeFileSync(join(data, 'mnt-b', RUN_FILES.record + '.tmp'), 'a file of the user');
    age(...['scratch', 'mnt-a', 'mnt-b'].map((d) => join(data, d)));
    const listing = await listRuns(host, data);
    assert.deepEqual(readdirSync(data).sort(), ['mnt-a', 'mnt-b', 'scratch']);
    assert.deepEqual(readdirSync(join(data, 'mnt-b')), [`${RUN_FILES.record}.tmp`]);
    assert.match(problemsOf(listing, data)['scratch'] ?? '', /no submit made here .*left as it is/);
  });

  it('a submit cut off before run.json leaves a marked folder, swept a minute on; a forged marker or other files keep a folder', async () => {
    const runsDir = join(mkdtempSync(join(tmpdir(), 'medrl-runs-')), 'runs');
    // A real run folder made by the submit's own command, then cut back to what a kill before `mv` leaves.
    assert.ok(await createRunFolder(host, record(runsDir, 'cut-1'), true));
    execFileSync('mv', [join(runsDir, 'cut-1', RUN_FILES.record), join(runsDir, 'cut-1', `${RUN_FILES.record}.tmp`)]);
    const marker = readFileSync(join(runsDir, 'cut-1', RUN_FILES.marker), 'utf8');
    assert.match(marker, /^[0-9a-f]{32}$/, "the marker holds this user's token");
    mkdirSync(join(runsDir, 'mine-2'));
    writeFileSync(join(runsDir, 'mine-2', RUN_FILES.marker), marker);
    writeFileSync(join(runsDir, 'mine-2', 'notes.txt'), 'keep me');
    // A marker a repository forged: it cannot know the token.
    mkdirSync(join(runsDir, 'forged-3'));
    writeFileSync(join(runsDir, 'forged-3', RUN_FILES.marker), 'deadbeef'.repeat(4));
    age(join(runsDir, 'cut-1'), join(runsDir, 'mine-2'), join(runsDir, 'forged-3'));
    const said = problemsOf(await listRuns(host, runsDir), runsDir);
    assert.match(said['cut-1'] ?? '', /interrupted submit .*: removed/);
    assert.match(said['mine-2'] ?? '', /kept/);
    assert.match(said['forged-3'] ?? '', /left as it is/);
    assert.deepEqual(readdirSync(runsDir).sort(), ['forged-3', 'mine-2']);
  });

  it('a run.json.tmp a killed write left beside run.json is removed a minute on, in a run folder MedRL made only', async () => {
    const runsDir = join(mkdtempSync(join(tmpdir(), 'medrl-runs-')), 'runs');
    assert.ok(await createRunFolder(host, record(runsDir, 'run-1'), true));
    const tmp = join(runsDir, 'run-1', `${RUN_FILES.record}.tmp`);
    writeFileSync(tmp, '{"id":');
    age(tmp);
    // An old run folder (no marker) with the same leftover: MedRL cannot prove it is its own.
    mkdirSync(join(runsDir, 'old-2'));
    writeFileSync(join(runsDir, 'old-2', RUN_FILES.record), JSON.stringify(record(runsDir, 'old-2')));
    writeFileSync(join(runsDir, 'old-2', `${RUN_FILES.record}.tmp`), '{"id":');
    age(join(runsDir, 'old-2', `${RUN_FILES.record}.tmp`));
    const listing = await listRuns(host, runsDir);
    assert.deepEqual(listing.runs.map((r) => r.record.id).sort(), ['old-2', 'run-1'], 'an old run folder still lists');
    assert.equal(existsSync(tmp), false);
    assert.ok(existsSync(join(runsDir, 'old-2', `${RUN_FILES.record}.tmp`)));
  });
});

describe('one crafted run folder costs only itself', () => {
  it('FIFOs, a 100 MB run.json and a run.json linked to a secret: the genuine run lists at once, each bad file is a problem, no content is printed', async () => {
    const root = mkdtempSync(join(tmpdir(), 'medrl-crafted-'));
    const runsDir = join(root, 'runs');
    assert.ok(await createRunFolder(host, record(runsDir, 'good-1'), true));
    writeFileSync(join(runsDir, 'good-1', RUN_FILES.log), 'step:1 - critic/score/mean:0.5\n');
    for (const [id, file] of [
      ['fifo-log', RUN_FILES.log],
      ['fifo-exit', RUN_FILES.exitCode],
    ] as const) {
      mkdirSync(join(runsDir, id));
      writeFileSync(join(runsDir, id, RUN_FILES.record), JSON.stringify(record(runsDir, id)));
      execFileSync('mkfifo', [join(runsDir, id, file)]);
    }
    mkdirSync(join(runsDir, 'huge-json'));
    writeFileSync(join(runsDir, 'huge-json', RUN_FILES.record), '');
    truncateSync(join(runsDir, 'huge-json', RUN_FILES.record), 100 << 20);
    const secret = join(root, 'shadow');
    writeFileSync(secret, 'root:$6$SECRET-HASH:19000:0:99999:7:::\n');
    mkdirSync(join(runsDir, 'linked'));
    symlinkSync(secret, join(runsDir, 'linked', RUN_FILES.record));
    mkdirSync(join(runsDir, 'garbled'));
    writeFileSync(join(runsDir, 'garbled', RUN_FILES.record), 'root:$6$SECRET-HASH:19000');

    const started = Date.now();
    const listing = await listRuns(host, runsDir);
    assert.ok(Date.now() - started < 10_000, `the listing took ${Date.now() - started} ms`);
    assert.deepEqual(listing.runs.map((r) => r.record.id).sort(), ['fifo-exit', 'fifo-log', 'good-1']);
    assert.match(listing.runs.find((r) => r.record.id === 'good-1')!.logTail, /score\/mean:0.5/);
    const said = problemsOf(listing, runsDir);
    assert.match(said[`fifo-log/${RUN_FILES.log}`] ?? '', /not read: not a regular file/);
    assert.match(said[`fifo-exit/${RUN_FILES.exitCode}`] ?? '', /not read: not a regular file/);
    assert.match(said[`huge-json/${RUN_FILES.record}`] ?? '', /not read: .*not listed as a run/);
    assert.match(said[`linked/${RUN_FILES.record}`] ?? '', /not read: .*link/);
    assert.match(said[`garbled/${RUN_FILES.record}`] ?? '', /not valid JSON/);
    assert.doesNotMatch(JSON.stringify(listing.problems), /SECRET|root:/);
  });
});
