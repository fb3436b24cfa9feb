import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import OpenAI from 'openai';
import { startStandinServer, STANDIN_SERVER, type StandinServer } from '../fixtures/openai-standin';

// The stand-in judge server must speak vLLM's wire protocol to the real `openai` client, and fail exactly as told.
describe('stand-in OpenAI-compatible server (standins/openai_server.py)', () => {
  let server: StandinServer;
  let client: OpenAI;
  before(async () => {
    server = await startStandinServer([
      '--served-model-name',
      'Judger',
      '--api-key',
      'k-123',
      '-tp',
      '8',
      '--gpu-memory-utilization',
      '0.95',
      '--retry-after',
      '0.25',
    ]);
    client = new OpenAI({ apiKey: 'k-123', baseURL: server.url, maxRetries: 0, timeout: 10_000 });
  });
  after(() => server.stop());

  it('says it is a stand-in in --help and in its first log line, and ignores unknown vLLM flags', () => {
    const help = spawnSync('python3', [STANDIN_SERVER, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /STAND-IN/);
    assert.match(server.log().split('\n')[0]!, /STAND-IN/);
    assert.match(server.log(), /ignores these flags: -tp 8 --gpu-memory-utilization 0.95/);
  });

  it('lists the served model names and answers chat and completions with usage, deterministically', async () => {
    const models = await client.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ['Judger'],
    );
    const prompt =
      'Judge the diagnosis.\nReference diagnosis: acute appendicitis\nPredicted diagnosis: appendicitis (acute)\nReply in JSON.';
    const chat = await client.chat.completions.create({
      model: 'Judger',
      messages: [{ role: 'user', content: prompt }],
      temperature: 0,
      seed: 42,
    });
    assert.deepEqual(JSON.parse(chat.choices[0]!.message.content!), { score: 1, label: 'correct', overlap: 1 });
    assert.ok(chat.usage!.prompt_tokens > 0 && chat.usage!.total_tokens === chat.usage!.prompt_tokens + chat.usage!.completion_tokens);
    const again = await client.chat.completions.create({ model: 'Judger', messages: [{ role: 'user', content: prompt }] });
    assert.equal(again.choices[0]!.message.content, chat.choices[0]!.message.content);
    const wrong = await client.completions.create({ model: 'Judger', prompt: 'Ground truth: heart failure\nResponse: pneumonia' });
    assert.match(wrong.choices[0]!.text, /^Score: 0\nLabel: incorrect/);
    const cut = await client.completions.create({ model: 'Judger', prompt: 'Ground truth: x\nResponse: x', max_tokens: 2 });
    assert.equal(cut.choices[0]!.finish_reason, 'length');
    assert.equal(cut.choices[0]!.text.trim(), 'Score: 1');
  });

  it('streams SSE chunks that add up to the whole answer, with a usage chunk and [DONE]', async () => {
    const content = 'Reference: heart failure\nResponse: congestive heart failure';
    const full = await client.chat.completions.create({ model: 'Judger', messages: [{ role: 'user', content }] });
    const stream = await client.chat.completions.create({
      model: 'Judger',
      messages: [{ role: 'user', content }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, full.choices[0]!.message.content);
    assert.equal(finish, 'stop');
    assert.equal(usage?.completion_tokens, full.usage!.completion_tokens);
    const raw = await fetch(`${server.url}/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k-123', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'Judger', prompt: 'hi', stream: true }),
    });
    assert.match(await raw.text(), /data: \{"id": "cmpl-[^\n]*\n\n[\s\S]*data: \[DONE\]\n\n$/);
  });

  it('refuses a wrong key with 401 and OpenAI error JSON, an unknown model with 404', async () => {
    const bad = new OpenAI({ apiKey: 'nope', baseURL: server.url, maxRetries: 0 });
    await assert.rejects(
      bad.models.list(),
      (e: unknown) => e instanceof OpenAI.AuthenticationError && e.status === 401 && /Incorrect API key/.test(e.message),
    );
    await assert.rejects(client.completions.create({ model: 'gpt-9', prompt: 'x' }), (e: unknown) => e instanceof OpenAI.NotFoundError);
    const health = await fetch(`http://127.0.0.1:${server.port}/health`);
    assert.equal(health.status, 200, '/health needs no key');
  });

  it('injects faults per prompt: 429 with retry-after then success, 500, malformed JSON, dropped connection', async () => {
    const ask = (content: string) => client.chat.completions.create({ model: 'Judger', messages: [{ role: 'user', content }] });
    await assert.rejects(
      ask('a [[standin-fault:429x2]]'),
      (e: unknown) => e instanceof OpenAI.RateLimitError && e.headers.get('retry-after') === '0.25',
    );
    await assert.rejects(ask('a [[standin-fault:429x2]]'), OpenAI.RateLimitError);
    assert.ok((await ask('a [[standin-fault:429x2]]')).choices[0]!.message.content, 'third try of the same prompt succeeds');
    await assert.rejects(ask('b [[standin-fault:500]]'), OpenAI.InternalServerError);
    await assert.rejects(ask('c [[standin-fault:malformed]]'), SyntaxError);
    await assert.rejects(ask('d [[standin-fault:drop]]'), OpenAI.APIConnectionError);
    const header = await fetch(`${server.url}/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k-123', 'x-standin-fault': '500' },
      body: JSON.stringify({ model: 'Judger', prompt: 'x' }),
    });
    assert.equal(header.status, 500);
    assert.equal(((await header.json()) as { error: { type: string } }).error.type, 'InternalServerError');
  });
});

describe('stand-in server options', () => {
  it('answers 503 on /health while starting, then 200', async () => {
    const s = await startStandinServer(['--startup-seconds', '1.5'], { waitReady: false });
    try {
      assert.equal((await fetch(`http://127.0.0.1:${s.port}/health`)).status, 503);
      assert.equal((await fetch(`${s.url}/models`)).status, 503);
      await new Promise((r) => setTimeout(r, 1700));
      assert.equal((await fetch(`http://127.0.0.1:${s.port}/health`)).status, 200);
    } finally {
      await s.stop();
    }
  });

  it('answers from a rules file, fails every Nth request, and waits --latency-ms (key from VLLM_API_KEY)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'medrl-standin-'));
    const rules = join(dir, 'answers.jsonl');
    writeFileSync(
      rules,
      [JSON.stringify({ pattern: 'Diagnosis: (\\w+)', reply: 'Label: \\1' }), JSON.stringify({ pattern: '.', reply: 'other' })].join('\n'),
    );
    const s = await startStandinServer(['--answers', rules, '--fault', '500', '--fault-every', '3', '--latency-ms', '150'], {
      env: { VLLM_API_KEY: 'env-key' },
    });
    try {
      const c = new OpenAI({ apiKey: 'env-key', baseURL: s.url, maxRetries: 0 });
      const t0 = Date.now();
      const outcomes: string[] = [];
      for (let i = 0; i < 6; i++) {
        try {
          outcomes.push(
            (await c.completions.create({ model: 'judge-model', prompt: i % 2 ? 'Diagnosis: sepsis' : 'hello' })).choices[0]!.text,
          );
        } catch (e) {
          outcomes.push(e instanceof OpenAI.InternalServerError ? '500' : String(e));
        }
      }
      assert.deepEqual(outcomes, ['other', 'Label: sepsis', '500', 'Label: sepsis', 'other', '500']);
      assert.ok(Date.now() - t0 >= 6 * 150, 'each request waited the latency');
    } finally {
      await s.stop();
    }
  });
});
