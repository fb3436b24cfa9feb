// The parse alone, as its own process for bench/metrics.bench.ts: reads a metrics log into a MetricSeries (what
// `medrl metrics` does before printing) and prints the step count.
import { LocalHost } from '../src/core/remote/local-host';
import { MetricsFollower } from '../src/core/metrics/metrics-follower';

const f = new MetricsFollower(new LocalHost(), process.argv[2]!);
f.poll({ final: true }).then(
  () => console.log(f.series.length),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
