import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { execChecked, HostFileNotFoundError, type Host } from '../remote/host';
import { shellPath } from '../remote/shell-quote';
import { errorMessage } from '../errors/located-error';

export interface DownloadProgress {
  done: number;
  total: number;
  files: number;
  filesDone: number;
  bytesPerSecond: number;
}

interface DownloadOptions {
  /** How often to reconnect and continue after a dropped connection before giving up (default 5). */
  retries?: number;
  /** Hash each file as it arrives and compare it with `sha256sum` on the host (default true; off, nothing is hashed). */
  verify?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: DownloadProgress) => void;
  /** Told when a pass failed and the download continues from the verified bytes. */
  onRetry?: (err: unknown, attempt: number) => void;
}

interface DownloadResult {
  dest: string;
  files: number;
  bytes: number;
  /** Bytes read from the host in this call (less than `bytes` when it resumed). */
  transferred: number;
  seconds: number;
  /** sha256 per relative path, compared with the host's (empty when verify is off). */
  sha256: Record<string, string>;
}

interface RemoteFile {
  rel: string;
  /** Absolute path on the host. */
  abs: string;
  size: number;
  mtime: string;
}

interface FileState {
  size: number;
  mtime: string;
  /** Bytes from 0 that are written and hashed: a resume continues here. */
  done: number;
  complete?: boolean;
  /** Under its final name: verified (or downloaded without verify). Until then it stays `<name>.partial`. */
  named?: boolean;
  sha256?: string;
}

interface State {
  remote: string;
  files: Record<string, FileState>;
}

const STATE_FILE = '.medrl-download.json';

/** Lists a file or a folder's files on the host with sizes and mtimes: one round trip. */
async function listRemote(host: Host, path: string): Promise<RemoteFile[]> {
  const p = shellPath(path);
  const r = await execChecked(
    host,
    `if [ -f ${p} ]; then find ${p} -maxdepth 0 -printf '%s\\t%T@\\t\\n'; elif [ -d ${p} ]; then cd ${p} && find . -type f -printf '%s\\t%T@\\t%P\\n'; else echo missing; fi`,
  );
  if (r.stdout.trim() === 'missing') throw new HostFileNotFoundError(host.name, path);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [size, mtime, ...rest] = l.split('\t');
      const rel = rest.join('\t');
      return { rel, abs: rel ? `${path.replace(/\/+$/, '')}/${rel}` : path, size: Number(size), mtime: mtime ?? '' };
    })
    .sort((a, b) => a.rel.localeCompare(b.rel));
}

/** sha256 of each file on the host (sha256sum), keyed like listRemote. Runs while the download does. */
async function remoteSha256(host: Host, path: string, files: RemoteFile[]): Promise<Map<string, string>> {
  const p = shellPath(path);
  const single = files.length === 1 && files[0]!.rel === '';
  const r = await execChecked(host, single ? `sha256sum < ${p}` : `cd ${p} && find . -type f -exec sha256sum {} +`, {
    timeoutMs: 30 * 60_000,
  });
  const out = new Map<string, string>();
  for (const line of r.stdout.split('\n')) {
    const m = /^([0-9a-f]{64})\s+\*?(.*)$/.exec(line);
    if (m) out.set(single ? '' : m[2]!.replace(/^\.\//, ''), m[1]!);
  }
  return out;
}

function localPathOf(dest: string, rel: string): string {
  if (rel.split('/').some((s) => s === '..')) throw new Error(`refusing a remote file name with "..": ${rel}`);
  return rel === '' ? dest : join(dest, rel);
}

async function hashPrefix(file: string, length: number): Promise<Hash> {
  const h = createHash('sha256');
  if (length === 0) return h;
  await new Promise<void>((resolve, reject) => {
    createReadStream(file, { start: 0, end: length - 1 })
      .on('data', (d) => h.update(d))
      .on('end', resolve)
      .on('error', reject);
  });
  return h;
}

/**
 * Downloads a file or folder from a host, each file as one stream over the host's connection (`Host.readChunks`), which
 * on one ssh2 connection beats parallel SFTP range reads (see bench/checkpoints.bench.ts). Each file is written to `<name>.partial` beside a small state file; after a
 * dropped connection (or a cancel, or a crash) the next call continues from the bytes on disk. With `verify` (the
 * default) every file's sha256 is computed as it arrives and compared with `sha256sum` on the host, and a file takes its
 * final name only once it matched: a failed check, a crash or a cancel never leaves an unverified file under that name.
 *
 * `dest` is the local file (for a remote file) or folder (for a remote folder) to create.
 */
export async function download(host: Host, remotePath: string, dest: string, o: DownloadOptions = {}): Promise<DownloadResult> {
  const started = performance.now();
  const retries = o.retries ?? 5;
  const verify = o.verify ?? true;
  const files = await listRemote(host, await host.resolvePath(remotePath));
  const isFile = files.length === 1 && files[0]!.rel === '';
  const stateDir = isFile ? dirname(dest) : dest;
  const statePath = isFile ? `${dest}${STATE_FILE}` : join(dest, STATE_FILE);
  await mkdir(stateDir, { recursive: true });
  const remoteId = `${host.name}:${remotePath}`;
  let state: State = { remote: remoteId, files: {} };
  try {
    const prev = JSON.parse(await readFile(statePath, 'utf8')) as State;
    if (prev.remote === remoteId) state = prev;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${statePath}: ${errorMessage(err)}`, { cause: err });
  }
  // A file that changed on the host since the partial was written starts over.
  for (const f of files) {
    const s = state.files[f.rel];
    if (!s || s.size !== f.size || s.mtime !== f.mtime) state.files[f.rel] = { size: f.size, mtime: f.mtime, done: 0 };
  }
  const remoteSums = verify ? remoteSha256(host, remotePath, files) : undefined;
  remoteSums?.catch(() => {}); // awaited below; this only keeps an early failure from being unhandled meanwhile
  const total = files.reduce((n, f) => n + f.size, 0);
  let transferred = 0;
  let lastSave = 0;
  const save = async () => {
    lastSave = Date.now();
    await writeFile(statePath, JSON.stringify(state));
  };
  const progress = () => {
    const done = Object.values(state.files).reduce((n, s) => n + s.done, 0);
    const secs = (performance.now() - started) / 1000;
    o.onProgress?.({
      done,
      total,
      files: files.length,
      filesDone: Object.values(state.files).filter((s) => s.complete).length,
      bytesPerSecond: secs > 0 ? transferred / secs : 0,
    });
  };
  const sums: Record<string, string> = {};
  /** Gives a finished file its final name (a rename in its own folder: atomic). */
  const nameFile = async (rel: string) => {
    const final = localPathOf(dest, rel);
    await rename(`${final}.partial`, final);
    state.files[rel]!.named = true;
  };

  const pass = async () => {
    for (const f of files) {
      const s = state.files[f.rel]!;
      const final = localPathOf(dest, f.rel);
      const partial = `${final}.partial`;
      if (s.complete) {
        const where = s.named ? final : partial;
        const st = await stat(where).catch(() => undefined);
        if (st?.size === f.size) {
          // Finished by an earlier call (that may not have hashed it): only hashed here when this call verifies.
          if (verify) sums[f.rel] = s.sha256 ??= (await hashPrefix(where, f.size)).digest('hex');
          else if (!s.named) await nameFile(f.rel);
          continue;
        }
        Object.assign(s, { done: 0, complete: false, named: false, sha256: undefined });
      }
      await mkdir(dirname(partial), { recursive: true });
      const onDisk = (await stat(partial).catch(() => undefined))?.size ?? 0;
      if (onDisk < s.done) s.done = 0;
      const fh: FileHandle = await open(partial, onDisk ? 'r+' : 'w');
      try {
        await fh.truncate(s.done);
        const hash = verify ? await hashPrefix(partial, s.done) : undefined;
        await fetchFile(host, f, s, fh, hash, o.signal, (n) => {
          transferred += n;
          progress();
          if (Date.now() - lastSave > 500) void save();
        });
        s.sha256 = hash?.digest('hex');
      } finally {
        await fh.close();
      }
      s.complete = true;
      if (s.sha256) sums[f.rel] = s.sha256;
      // Without a checksum to wait for, the file is done; with one, it keeps its temporary name until it matched.
      if (!verify) await nameFile(f.rel);
      await save();
      progress();
    }
  };

  for (let attempt = 0; ; attempt++) {
    try {
      await pass();
      break;
    } catch (err) {
      await save();
      if (o.signal?.aborted || attempt >= retries || err instanceof HostFileNotFoundError) throw err;
      o.onRetry?.(err, attempt + 1);
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)));
    }
  }

  if (remoteSums) {
    // sha256sum ran while the download did; if the connection dropped under it too, it runs again now.
    const theirs = await remoteSums.catch((err: unknown) => {
      if (err instanceof HostFileNotFoundError) throw err;
      return remoteSha256(host, remotePath, files);
    });
    const bad: string[] = [];
    for (const f of files) {
      const want = theirs.get(f.rel);
      if (!want) throw new Error(`${host.name}: sha256sum did not report ${f.rel || remotePath}`);
      const s = state.files[f.rel]!;
      if (want === sums[f.rel]) {
        if (!s.named) await nameFile(f.rel);
        continue;
      }
      const local = localPathOf(dest, f.rel);
      await rm(s.named ? local : `${local}.partial`, { force: true });
      delete state.files[f.rel];
      bad.push(`checksum mismatch for ${f.rel || remotePath}: host ${want}, downloaded ${sums[f.rel]}`);
    }
    await save();
    if (bad.length) throw new Error(`${bad.join('; ')} (the file${bad.length > 1 ? 's were' : ' was'} removed; download again)`);
  }
  await rm(statePath, { force: true });
  return { dest, files: files.length, bytes: total, transferred, seconds: (performance.now() - started) / 1000, sha256: sums };
}

/** Disk writes gather the stream's small packets into pieces of this size, and this many are in flight at once. */
const WRITE_BATCH = 1 << 20;
const WRITES_IN_FLIGHT = 8;

/**
 * Streams [done, size) of one file (`Host.readChunks`: one command, no request per chunk), hashing in order and writing
 * without stopping the stream (several writes in flight, no copies: writev), and advances `s.done` only past bytes that
 * are on disk, so the state always names a prefix a resume can trust.
 */
async function fetchFile(
  host: Host,
  f: RemoteFile,
  s: FileState,
  fh: FileHandle,
  hash: Hash | undefined,
  signal: AbortSignal | undefined,
  onBytes: (n: number) => void,
): Promise<void> {
  const writes: { done: Promise<unknown>; length: number }[] = [];
  let batch: Buffer[] = [];
  let batched = 0;
  let pos = s.done;
  const settleOldest = async () => {
    const w = writes.shift()!;
    await w.done;
    s.done += w.length;
    onBytes(w.length);
  };
  const issue = () => {
    const done = fh.writev(batch, pos);
    done.catch(() => undefined); // awaited in order by settleOldest; this only keeps a later failure from being unhandled meanwhile
    writes.push({ done, length: batched });
    pos += batched;
    batch = [];
    batched = 0;
  };
  try {
    // No end: a bounded read would add `head` to the pipe on an SSH host. A file that grew is an error below.
    for await (const chunk of host.readChunks(f.abs, { start: s.done, signal })) {
      if (pos + batched + chunk.length > f.size) throw new Error(`${f.abs} grew on the host during the download (${f.size} bytes listed)`);
      hash?.update(chunk);
      batch.push(chunk);
      batched += chunk.length;
      if (batched < WRITE_BATCH) continue;
      issue();
      if (writes.length > WRITES_IN_FLIGHT) await settleOldest();
    }
  } finally {
    // What arrived before a drop or a cancel is good: keep it, so the resume starts after it.
    if (batched) issue();
    while (writes.length) await settleOldest();
  }
  signal?.throwIfAborted();
  if (s.done !== f.size) throw new Error(`short read of ${f.abs}: ${s.done} of ${f.size} bytes (the file changed on the host?)`);
}
