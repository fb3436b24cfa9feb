import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What identifies a judge answer: the server, the model, the messages and every sampling parameter. */
export interface JudgeCacheKey {
  url: string;
  model: string;
  messages: unknown;
  temperature: number;
  seed?: number;
  maxTokens: number;
}

let tmpCount = 0;

/**
 * Judge answers on disk, one JSON file per request, keyed by the hash of url + model + prompt + parameters, so re-running
 * a batch costs no judge calls. Only successful answers are stored.
 */
export class JudgeCache {
  constructor(readonly dir: string) {}

  private file(key: JudgeCacheKey): string {
    const hash = createHash('sha256')
      .update(JSON.stringify([key.url.replace(/\/+$/, ''), key.model, key.messages, key.temperature, key.seed ?? null, key.maxTokens]))
      .digest('hex');
    return join(this.dir, hash.slice(0, 2), `${hash}.json`);
  }

  async get(key: JudgeCacheKey): Promise<string | undefined> {
    try {
      const entry = JSON.parse(await readFile(this.file(key), 'utf8')) as { raw?: unknown };
      return typeof entry.raw === 'string' ? entry.raw : undefined;
    } catch {
      return undefined; // not cached (or a damaged entry, which the next answer replaces)
    }
  }

  async put(key: JudgeCacheKey, raw: string): Promise<void> {
    const file = this.file(key);
    // The user's alone: an answer can quote the sample it judged, which may be clinical text.
    await mkdir(join(file, '..'), { recursive: true, mode: 0o700 });
    // One temporary name per write: two samples with the same prompt in one batch are answered, and put, at once.
    const tmp = `${file}.${process.pid}.${++tmpCount}.tmp`;
    await writeFile(tmp, JSON.stringify({ raw, model: key.model, url: key.url, created: new Date().toISOString() }), { mode: 0o600 });
    await rename(tmp, file);
  }
}
