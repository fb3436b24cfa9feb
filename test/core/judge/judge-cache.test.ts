import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JudgeCache } from '../../../src/core/judge/judge-cache';

describe('the judge cache', () => {
  it('two answers to the same prompt put at once both land (a batch with two identical samples)', async () => {
    const cache = new JudgeCache(mkdtempSync(join(tmpdir(), 'medrl-judge-cache-')));
    const key = { url: 'http://judge/v1', model: 'm', messages: [{ role: 'user', content: 'same' }], temperature: 0, maxTokens: 8 };
    await Promise.all([cache.put(key, '{"score": 1}'), cache.put(key, '{"score": 1}')]);
    assert.equal(await cache.get(key), '{"score": 1}');
  });

  it("keeps its answers the user's alone (0700 folders, 0600 files): an answer can quote clinical text", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'medrl-judge-cache-')), 'judge-cache');
    const cache = new JudgeCache(dir);
    await cache.put({ url: 'http://judge/v1', model: 'm', messages: [], temperature: 0, maxTokens: 8 }, '{"score": 1}');
    const [sub] = readdirSync(dir);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, sub!)).mode & 0o777, 0o700);
    const [file] = readdirSync(join(dir, sub!));
    assert.equal(statSync(join(dir, sub!, file!)).mode & 0o777, 0o600);
  });
});
