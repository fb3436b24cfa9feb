import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricLogParser } from '../../../src/core/metrics/metric-log-parser';

/** Feeds whole lines as a log reader would, then ends the log. */
function parse(lines: string[]): MetricLogParser {
  const p = new MetricLogParser();
  let start = 0;
  for (const text of lines) {
    const b = Buffer.from(text);
    p.feedBytes({ buf: b, from: 0, to: b.length, start });
    start += b.length + 1;
  }
  p.flush();
  return p;
}

function at(p: MetricLogParser, step: number, metric: string): number | undefined {
  const row = p.series.indexOf(step);
  return row < 0 ? undefined : p.series.row(row).metrics[metric];
}

describe('values as verl and TRL print them from a GPU run', () => {
  it('reads torch CUDA tensors (device, dtype, grad_fn) and NumPy booleans and reprs as numbers, with no warning', () => {
    const p = parse([
      "(TaskRunner pid=1, ip=10.0.0.1) step:1 - actor/grad_norm:tensor(1.2, device='cuda:0') - actor/pg_loss:tensor(-0.5, device='cuda:0', dtype=torch.float64) - actor/kl:tensor(0.25, device='cuda:0', grad_fn=<MeanBackward0>) - actor/clipped:np.True_ - critic/score/mean:np.float64(1.5)",
    ]);
    const trl = parse([
      "{'loss': tensor(0.75, device='cuda:0'), 'grad_norm': tensor(2.0, device='cuda:0', grad_fn=<AddBackward0>), 'done': np.False_, 'epoch': 0.5}",
    ]);
    assert.deepEqual([...p.problems, ...trl.problems], []);
    assert.equal(at(p, 1, 'actor/grad_norm'), 1.2);
    assert.equal(at(p, 1, 'actor/pg_loss'), -0.5);
    assert.equal(at(p, 1, 'actor/kl'), 0.25);
    assert.equal(at(p, 1, 'actor/clipped'), 1);
    assert.equal(at(p, 1, 'critic/score/mean'), 1.5);
    assert.equal(at(trl, 1, 'loss'), 0.75);
    assert.equal(at(trl, 1, 'grad_norm'), 2);
    assert.equal(at(trl, 1, 'done'), 0);
  });
});

describe('a metric named __proto__', () => {
  it('is kept from verl JSONL and from TRL dicts like any other name', () => {
    const jsonl = parse(['{"step": 1, "data": {"__proto__": 0.5, "critic/score/mean": 0.25}}']);
    assert.deepEqual(jsonl.series.metricNames(), ['__proto__', 'critic/score/mean']);
    assert.equal(at(jsonl, 1, '__proto__'), 0.5);
    const trl = parse(["{'__proto__': 0.75, 'loss': 0.1, 'epoch': 0.1}"]);
    assert.deepEqual(trl.series.metricNames(), ['__proto__', 'epoch', 'loss']);
    assert.equal(at(trl, 1, '__proto__'), 0.75);
  });
});
