import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../../../src/core/remote/local-host';
import { download, type DownloadProgress } from '../../../src/core/checkpoints/download';
import { deleteCheckpoint } from '../../../src/core/checkpoints/delete-checkpoint';
import { discoverCheckpoints } from '../../../src/core/checkpoints/discover-checkpoints';
import { writeStandInRun } from '../../fixtures/stand-in-checkpoints';

/** A local host whose connection "drops" once after a number of bytes, like a killed SSH connection. */
class DroppingHost extends LocalHost {
  private served = 0;
  constructor(
    private dropAfter: number,
    private corrupt = false,
  ) {
    super();
  }
  /** Passes the file on in network-sized pieces and fails mid-stream once `dropAfter` bytes went through. */
  override async *readChunks(path: string, opts: { start?: number; end?: number; signal?: AbortSignal } = {}): AsyncGenerator<Buffer> {
    let first = opts.start === 0;
    for await (const chunk of super.readChunks(path, opts)) {
      for (let off = 0; off < chunk.length; off += 50_000) {
        if (this.served >= this.dropAfter) {
          this.dropAfter = Infinity;
          throw new Error('flaky: connection lost');
        }
        const b = Buffer.from(chunk.subarray(off, off + 50_000));
        if (this.corrupt && first) b[0] = b[0]! ^ 0xff;
        first = false;
        this.served += b.length;
        yield b;
      }
    }
  }
}

function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), `${rel}${e.name}/`);
      else out[`${rel}${e.name}`] = readFileSync(join(d, e.name)).toString('base64');
    }
  };
  walk(dir, '');
  return out;
}

describe('download a checkpoint (streamed, resume, sha256)', () => {
  it('downloads a checkpoint folder byte for byte with progress', async () => {
    const runs = mkdtempSync(join(tmpdir(), 'dl-'));
    const dir = writeStandInRun(runs, { id: 'r', framework: 'verl', steps: [5], critic: true });
    const src = join(dir, 'checkpoints/global_step_5');
    const dest = join(mkdtempSync(join(tmpdir(), 'dl-dest-')), 'global_step_5');
    const seen: DownloadProgress[] = [];
    const r = await download(new LocalHost(), src, dest, { onProgress: (p) => seen.push(p) });
    assert.deepEqual(tree(dest), tree(src));
    assert.equal(r.files, Object.keys(tree(src)).length);
    assert.equal(seen.at(-1)!.done, r.bytes);
    assert.equal(seen.at(-1)!.filesDone, r.files);
    assert.ok(!existsSync(join(dest, '.medrl-download.json')), 'state file removed when done');
  });

  it('continues after a dropped connection and the bytes are identical', async () => {
    const src = join(mkdtempSync(join(tmpdir(), 'dl-')), 'model.safetensors');
    writeFileSync(src, randomBytes(3_000_000));
    const dest = join(mkdtempSync(join(tmpdir(), 'dl-dest-')), 'model.safetensors');
    const retries: string[] = [];
    const r = await download(new DroppingHost(1_000_000), src, dest, { onRetry: (e) => retries.push(String(e)) });
    assert.deepEqual(retries, ['Error: flaky: connection lost']);
    assert.ok(readFileSync(dest).equals(readFileSync(src)));
    assert.equal(r.transferred, 3_000_000, 'continued from the bytes that arrived: none read twice');
  });

  it('without retries it stops, keeps the partial file and state, and the next call resumes from the verified size', async () => {
    const src = join(mkdtempSync(join(tmpdir(), 'dl-')), 'big.bin');
    writeFileSync(src, randomBytes(2_000_000));
    const dest = join(mkdtempSync(join(tmpdir(), 'dl-dest-')), 'big.bin');
    await assert.rejects(download(new DroppingHost(800_000), src, dest, { retries: 0 }), /connection lost/);
    assert.ok(existsSync(`${dest}.partial`) && existsSync(`${dest}.medrl-download.json`));
    const verified = (JSON.parse(readFileSync(`${dest}.medrl-download.json`, 'utf8')) as { files: Record<string, { done: number }> }).files[
      ''
    ]!.done;
    assert.equal(verified, 800_000, 'every byte that arrived before the drop is kept');
    const host = new LocalHost();
    const r = await download(host, src, dest);
    assert.equal(r.transferred, 2_000_000 - verified);
    assert.ok(readFileSync(dest).equals(readFileSync(src)));
    assert.ok(!existsSync(`${dest}.partial`));
  });

  it('cancel keeps what arrived for a later resume', async () => {
    const src = join(mkdtempSync(join(tmpdir(), 'dl-')), 'c.bin');
    writeFileSync(src, randomBytes(32 << 20));
    const dest = join(mkdtempSync(join(tmpdir(), 'dl-dest-')), 'c.bin');
    const ac = new AbortController();
    await assert.rejects(
      download(new LocalHost(), src, dest, {
        signal: ac.signal,
        onProgress: (p) => {
          if (p.done >= 2 << 20) ac.abort();
        },
      }),
      /abort/i,
    );
    assert.ok(existsSync(`${dest}.partial`));
    const r = await download(new LocalHost(), src, dest);
    assert.ok(r.transferred > 0 && r.transferred < 28 << 20, `resumed: ${r.transferred}`);
    assert.ok(readFileSync(dest).equals(readFileSync(src)));
  });

  it('without verify nothing is hashed; a later verifying call hashes what the first one finished and checks it', async () => {
    const src = mkdtempSync(join(tmpdir(), 'dl-'));
    writeFileSync(join(src, 'a.bin'), randomBytes(200_000));
    writeFileSync(join(src, 'b.bin'), randomBytes(200_000));
    const dest = join(mkdtempSync(join(tmpdir(), 'dl-dest-')), 'ck');
    await assert.rejects(download(new DroppingHost(250_000), src, dest, { verify: false, retries: 0 }), /connection lost/);
    assert.ok(existsSync(join(dest, 'a.bin')) && existsSync(join(dest, 'b.bin.partial')));
    const r = await download(new LocalHost(), src, dest);
    assert.equal(r.transferred, 150_000, 'a.bin was not read again, b.bin continued');
    const sha = (f: string) =>
      createHash('sha256')
        .update(readFileSync(join(src, f)))
        .digest('hex');
    assert.deepEqual(r.sha256, { 'a.bin': sha('a.bin'), 'b.bin': sha('b.bin') });
    assert.deepEqual(tree(dest), tree(src));
    const plain = await download(new LocalHost(), src, join(mkdtempSync(join(tmpdir(), 'dl-dest-')), 'ck'), { verify: false });
    assert.deepEqual(plain.sha256, {});
  });

  it('a checksum that differs from sha256sum on the host is an error and the bad file is not kept', async () => {
    const src = join(mkdtempSync(join(tmpdir(), 'dl-')), 'x.bin');
    writeFileSync(src, randomBytes(10_000));
    const dest = join(mkdtempSync(join(tmpdir(), 'dl-dest-')), 'x.bin');
    await assert.rejects(
      download(new DroppingHost(Infinity, true), src, dest),
      /checksum mismatch for .*x\.bin: host [0-9a-f]{64}, downloaded [0-9a-f]{64}/,
    );
    assert.ok(!existsSync(dest));
  });
});

describe('delete a checkpoint', () => {
  it("frees its bytes, moves verl's latest marker to the newest step left, and refuses other folders", async () => {
    const host = new LocalHost();
    const runs = mkdtempSync(join(tmpdir(), 'del-'));
    const dir = writeStandInRun(runs, { id: 'r', framework: 'verl', steps: [10, 20, 30] });
    const cks = (await discoverCheckpoints(host, { runsDir: runs })).runs[0]!.checkpoints;
    const latest = cks.find((c) => c.latest)!;
    assert.equal(latest.step, 30);
    const r = await deleteCheckpoint(host, latest);
    assert.equal(r.freedBytes, latest.sizeBytes);
    assert.equal(r.latest, 20);
    assert.equal(readFileSync(join(dir, 'checkpoints/latest_checkpointed_iteration.txt'), 'utf8').trim(), '20');
    const left = (await discoverCheckpoints(host, { runsDir: runs })).runs[0]!.checkpoints;
    assert.deepEqual(
      left.map((c) => [c.step, c.latest]),
      [
        [10, false],
        [20, true],
      ],
    );
    await assert.rejects(deleteCheckpoint(host, { ...left[0]!, path: dir }), /refusing to delete .*not a checkpoint folder/);
    assert.ok(existsSync(dir));
  });
});
