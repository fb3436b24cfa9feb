import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JudgeClient } from '../../../src/core/judge/judge-client';
import { JudgeCache } from '../../../src/core/judge/judge-cache';
import { judgeSamples, DEFAULT_JUDGE_PROMPT } from '../../../src/core/judge/judge-scorer';
import { parseScoreSpec } from '../../../src/core/scoring/score-parser';
import type { RewardSample } from '../../../src/core/scoring/sample';
import { startStandinServer, type StandinServer } from '../fixtures/openai-standin';

const fast = { attempts: 4, baseDelayMs: 50, maxDelayMs: 200 };
const requests = (s: StandinServer) => (s.log().match(/"POST \/v1\/chat\/completions/g) ?? []).length;
const sample = (solution: string, gt: string): RewardSample => ({ data_source: 'diagnosis', solution_str: solution, ground_truth: gt });

describe('judge client against the stand-in judge server', () => {
  let server: StandinServer;
  before(async () => {
    server = await startStandinServer(['--served-model-name', 'Judger', '--api-key', 'k1', '--latency-ms', '100', '--retry-after', '0.6']);
  });
  after(() => server.stop());

  it('scores a batch through the default template and JSON parser, keeps raw answers, shows temperature and seed', async () => {
    const client = new JudgeClient({ name: 'j', url: server.url, model: 'Judger', apiKey: 'k1', seed: 42 }, undefined, fast);
    assert.deepEqual(client.params, { temperature: 0, seed: 42, maxTokens: 1024 });
    const res = await judgeSamples({ client, template: DEFAULT_JUDGE_PROMPT, parser: parseScoreSpec('json:score') }, [
      sample('Acute appendicitis', 'appendicitis, acute'),
      sample('Community-acquired pneumonia', 'pulmonary embolism'),
    ]);
    assert.deepEqual(
      res.map((r) => [r.index, r.score, r.error]),
      [
        [0, 1, null],
        [1, 0, null],
      ],
    );
    assert.match(res[0]!.raw!, /"label": "correct"/);
    assert.ok(res[0]!.latencyMs >= 100);
  });

  it('retries 429 after retry-after, 500, malformed JSON and dropped connections; a lasting failure is reported per sample', async () => {
    const client = new JudgeClient({ name: 'j', url: server.url, model: 'Judger', apiKey: 'k1', maxConcurrency: 8 }, undefined, fast);
    const judge = {
      client,
      template: 'Reference: {ground_truth}\nResponse: {solution_str}\nJSON please',
      parser: parseScoreSpec('json:score'),
    };
    const t0 = Date.now();
    const res = await judgeSamples(judge, [
      sample('sepsis [[standin-fault:429x1]]', 'sepsis'),
      sample('sepsis [[standin-fault:500x2]]', 'sepsis'),
      sample('sepsis [[standin-fault:malformedx1]]', 'sepsis'),
      sample('sepsis [[standin-fault:dropx2]]', 'sepsis'),
      sample('sepsis [[standin-fault:500]]', 'sepsis'),
      sample('sepsis', 'sepsis'),
    ]);
    assert.deepEqual(
      res.map((r) => r.score),
      [1, 1, 1, 1, null, 1],
    );
    assert.deepEqual(
      res.map((r) => r.attempts),
      [2, 3, 2, 3, 4, 1],
    );
    assert.ok(res[0]!.latencyMs >= 600 + 200, `waited retry-after (0.6 s) between two 100 ms calls: ${res[0]!.latencyMs}`);
    assert.match(res[4]!.error!, /^500 Internal server error \(stand-in fault\) \(after 4 attempts\)$/);
    assert.ok(Date.now() - t0 < 5000);
  });

  it('does not retry a wrong key, and says where to set it', async () => {
    const client = new JudgeClient({ name: 'j', url: server.url, model: 'Judger', apiKey: 'wrong' }, undefined, fast);
    const before = requests(server);
    const call = await client.chat([{ role: 'user', content: 'x' }]);
    assert.equal(call.attempts, 1);
    assert.match(
      call.error!,
      /401 Incorrect API key provided\. \(set the judge API key: "MedRL: Set Judge API Key", or MEDRL_JUDGE_API_KEY for the CLI\)/,
    );
    assert.equal(requests(server) - before, 1);
  });

  it('keeps at most maxConcurrency requests in flight', async () => {
    const client = new JudgeClient({ name: 'j', url: server.url, model: 'Judger', apiKey: 'k1', maxConcurrency: 4 }, undefined, fast);
    const t0 = Date.now();
    const calls = await Promise.all(Array.from({ length: 12 }, (_, i) => client.chat([{ role: 'user', content: `c${i}` }])));
    const ms = Date.now() - t0;
    assert.ok(calls.every((c) => c.raw !== null));
    assert.ok(ms >= 3 * 100 && ms < 12 * 100, `12 calls of 100 ms, 4 at a time: ${ms} ms`);
  });

  it('answers a repeated request from the disk cache (same url, model, prompt, parameters), unless bypassed', async () => {
    const cache = new JudgeCache(mkdtempSync(join(tmpdir(), 'medrl-judge-cache-')));
    const make = (seed: number) => new JudgeClient({ name: 'j', url: server.url, model: 'Judger', apiKey: 'k1', seed }, cache, fast);
    const msg = [{ role: 'user', content: 'Reference: gout\nResponse: gout' }];
    const first = await make(1).chat(msg);
    const n = requests(server);
    const second = await make(1).chat(msg);
    assert.deepEqual([second.cached, second.raw, requests(server)], [true, first.raw, n]);
    assert.equal((await make(2).chat(msg)).cached, false, 'another seed is another request');
    assert.equal((await make(1).chat(msg, { bypassCache: true })).cached, false);
    const failing = await make(1).chat([{ role: 'user', content: 'x [[standin-fault:500]]' }]);
    assert.equal((await make(1).chat([{ role: 'user', content: 'x [[standin-fault:500]]' }])).cached, false, 'failures are not cached');
    assert.equal(failing.raw, null);
  });

  it('stops on cancel and reports the rest as cancelled', async () => {
    const client = new JudgeClient({ name: 'j', url: server.url, model: 'Judger', apiKey: 'k1', maxConcurrency: 2 }, undefined, fast);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 250);
    const res = await judgeSamples(
      { client, template: '{solution_str}', parser: parseScoreSpec('number') },
      Array.from({ length: 20 }, (_, i) => sample(`s${i}`, 'x')),
      { signal: ac.signal },
    );
    assert.equal(res.length, 20);
    assert.ok(res.filter((r) => r.error === 'cancelled').length >= 10);
  });
});
