// Regenerates the demo's training files (demo/data/*/verl/{train,test}.{parquet,jsonl}) from the real samples with the
// dataset converter: `npx tsx scripts/make-demo-datasets.ts`. test/core/demo/demo-datasets.test.ts checks they are current.
import { join } from 'node:path';
import { LocalHost } from '../src/core/remote/local-host';
import { writeDemoDatasets } from '../src/core/demo/demo-datasets';

const demo = join(__dirname, '..', 'demo');
writeDemoDatasets(new LocalHost(), demo).then(
  (files) => console.log(`wrote ${files.length} file(s):\n${files.join('\n')}`),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
