// The parse alone, as its own process for bench/metrics.bench.ts: reads a metrics log into a MetricSeries as
// `medrl metrics` does before printing (a big log split over worker threads; on one thread with --one-thread) and
// prints the step count.
import { LocalHost } from '../src/core/remote/local-host';
import { MetricsFollower } from '../src/core/metrics/metrics-follower';

const split = process.argv[3] === '--one-thread' ? undefined : {};
const f = new MetricsFollower(new LocalHost(), process.argv[2]!, undefined, undefined, { split });
f.poll({ final: true }).then(
  () => console.log(f.series.length),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
