import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { execChecked, type Host } from '../remote/host';
import { shellPath } from '../remote/shell-quote';
import { catInto } from '../remote/cat-into';

/** Bytes gathered before a write to the host: fewer, larger writes; memory stays bounded. */
const BATCH = 1 << 20;

/** A file being written on a host, under a temporary name until `commit`. */
export interface PrivateOutput {
  write(bytes: Uint8Array | string): Promise<void>;
  /** Renames the finished file to its name: until then no reader sees a partial file there. */
  commit(): Promise<void>;
  /** Stops writing and removes the temporary file. */
  abort(): Promise<void>;
}

/**
 * Streams a file onto a host (local or SSH alike) through `catInto` into `PATH.medrl-part-XXXX` (commands run under
 * umask 077, and it is chmod 600 before the rename). The rename is a second command after `cat` has exited 0, so a CLI killed
 * mid-write leaves a temporary file, never a truncated file under PATH.
 */
export async function openPrivateOutput(host: Host, path: string): Promise<PrivateOutput> {
  await host.mkdir(posix.dirname(path));
  const part = `${path}.medrl-part-${randomBytes(4).toString('hex')}`;
  const cat = await catInto(host, part);
  let batch: Buffer[] = [];
  let batched = 0;
  const flush = async () => {
    if (!batched) return;
    const bytes = Buffer.concat(batch, batched);
    [batch, batched] = [[], 0];
    if (!(await cat.write(bytes))) throw new Error(`${host.name}: writing ${part} stopped: ${(await cat.end()).failure}`);
  };
  const removePart = () => execChecked(host, `rm -f -- ${shellPath(part)}`).then(() => undefined);
  return {
    async write(bytes) {
      const b = typeof bytes === 'string' ? Buffer.from(bytes) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      // Copied: a caller may reuse its buffer (recycled read chunks) once this returns.
      batch.push(Buffer.from(b));
      batched += b.length;
      if (batched >= BATCH) await flush();
    },
    async commit() {
      try {
        await flush();
        const { code, signal, failure } = await cat.end();
        if (code !== 0)
          throw new Error(`${host.name}: writing ${part} failed (${signal ? `killed by ${signal}` : `exit code ${code}`}): ${failure}`);
        await execChecked(host, `chmod 600 ${shellPath(part)} && mv -f -- ${shellPath(part)} ${shellPath(path)}`);
      } catch (err) {
        await removePart();
        throw err;
      }
    },
    async abort() {
      await cat.kill();
      await removePart();
    },
  };
}
