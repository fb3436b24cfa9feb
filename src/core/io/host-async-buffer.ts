import type { AsyncBuffer } from 'hyparquet';
import type { Host } from '../remote/host';

/**
 * A file on a host as hyparquet's AsyncBuffer: each slice is one range read, so parquet footers and columns come over SFTP
 * without the rest. `size` saves a stat when the caller already knows it.
 */
export async function hostAsyncBuffer(host: Host, path: string, knownSize?: number): Promise<AsyncBuffer> {
  const size = knownSize ?? (await host.stat(path)).size;
  return {
    byteLength: size,
    async slice(start: number, end?: number): Promise<ArrayBuffer> {
      const buf = await host.readFile(path, { start, end: end ?? size });
      return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
    },
  };
}
