import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
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
});
