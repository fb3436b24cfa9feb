import { parentPort } from 'node:worker_threads';
import { errorMessage } from '../errors/located-error';
import { LocalHost } from '../remote/local-host';
import { BlockSpill } from './block-spill';
import type { Float64Column } from './float64-column';
import { MetricSeries } from './metric-series';
import { MetricsFollower } from './metrics-follower';
import type { ColumnBlocks, RangeJob, RangeReply } from './split-parse';

/*
 * A worker thread that parses one byte range of a local metrics log (split-parse.ts starts one per range). It replies
 * with the range's steps and parser state, then hands over one column at a time as the merging thread asks for it:
 * until then the range's values wait here, within this worker's budget of resident blocks (the rest in its spill file).
 * A column goes as its blocks, transferred without a copy (those spilled read back first).
 */
const WORKER_BLOCK_BUDGET = 16 << 20;
/** The range's columns, each dropped once handed over (its blocks may then go). */
let columns: Array<Float64Column | undefined> = [];

parentPort?.on('message', (msg: { range: RangeJob } | { column: number }) => {
  if ('column' in msg) {
    const col = columns[msg.column]!;
    const rows = col.length;
    const blocks = col.takeBlocks();
    columns[msg.column] = undefined;
    parentPort?.postMessage(
      { rows, blocks } satisfies ColumnBlocks,
      blocks.map((b) => b.buffer),
    );
    return;
  }
  parseRange(msg.range).then(
    (reply) => parentPort?.postMessage(reply, 'steps' in reply ? [reply.steps.buffer] : []),
    (err: unknown) => parentPort?.postMessage({ failed: errorMessage(err) } satisfies RangeReply),
  );
});

async function parseRange(job: RangeJob): Promise<RangeReply> {
  const series = new MetricSeries(new BlockSpill({ budgetBytes: WORKER_BLOCK_BUDGET }));
  const follower = new MetricsFollower(new LocalHost(job.host), job.path, series);
  follower.startAt(job.start);
  // Not `final`: a last line without a newline is left to the merging thread, which reads on from here.
  await follower.poll({ end: job.end });
  const entries = series.columnEntries();
  columns = entries.map(([, col]) => col);
  return {
    steps: Float64Array.from(series.steps),
    columns: entries.map(([name]) => name),
    state: follower.parser.rangeState(),
    end: follower.readOffset,
  };
}
