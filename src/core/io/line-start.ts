import { readSync } from 'node:fs';

/**
 * The first line start at or after `at` (> 0) in the file open as `fd`, of `size` bytes: just past the first newline
 * at or after byte `at - 1`, read forward through `buf`; `size` if there is none. Where a file is cut into ranges of
 * whole lines for worker threads.
 */
export function lineStartFrom(fd: number, at: number, size: number, buf: Buffer): number {
  for (let pos = at - 1; pos < size; pos += buf.length) {
    const n = readSync(fd, buf, 0, buf.length, pos);
    if (n === 0) break;
    const nl = buf.subarray(0, n).indexOf(0x0a);
    if (nl >= 0) return pos + nl + 1;
  }
  return size;
}

/**
 * The newlines in bytes [start, end) of the file open as `fd`, read through `buf`: the lines a range of whole lines holds
 * (a worker scanning the next range numbers its lines from there on).
 */
export function newlinesIn(fd: number, start: number, end: number, buf: Buffer): number {
  let count = 0;
  for (let pos = start; pos < end;) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
    if (n === 0) break;
    const read = buf.subarray(0, n);
    for (let i = read.indexOf(0x0a); i !== -1; i = read.indexOf(0x0a, i + 1)) count++;
    pos += n;
  }
  return count;
}
