// Datasets on a 2 GiB JSONL file: time to the first 100 rows (target under 100 ms, baseline `head -n 100`), a full scan with
// row count and data_source counts (baseline `wc -l`), and a parquet scan against DuckDB. `npm run bench -- datasets`.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { LocalHost } from '../src/core/remote/local-host';
import { openDataset } from '../src/core/datasets/open-dataset';
import { readRows } from '../src/core/datasets/dataset-reader';
import { inspectDataset } from '../src/core/datasets/inspect-dataset';
import { rowsToParquet } from '../src/core/datasets/parquet-rows';

const dir = join(__dirname, '.data');
const SOURCES = ['pubmedqa', 'medec', 'medqa'];
const NOTE = 'A 58-year-old man presents with two days of fever, productive cough and pleuritic chest pain. ';

function row(i: number, repeat: number) {
  return {
    data_source: SOURCES[i % 3],
    prompt: [{ role: 'user', content: `Case ${i}: ${NOTE.repeat(repeat)}` }],
    ability: 'medical',
    reward_model: { style: 'rule', ground_truth: i % 2 ? 'yes' : 'no' },
    extra_info: { index: i },
  };
}

function generateJsonl(file: string, bytes: number): number {
  const fd = openSync(file, 'w');
  let n = 0;
  for (let written = 0; written < bytes;) {
    const lines: string[] = [];
    for (let i = 0; i < 2000; i++) lines.push(JSON.stringify(row(n++, 18)));
    const chunk = Buffer.from(lines.join('\n') + '\n');
    writeSync(fd, chunk);
    written += chunk.length;
  }
  closeSync(fd);
  return n;
}

const ms = (t: number) => performance.now() - t;
const fmt = (x: number) => `${x.toFixed(1)} ms`;
function line(name: string, value: number, baseName: string, base: number): void {
  console.log(
    `${name.padEnd(44)} ${fmt(value).padStart(12)}   ${baseName.padEnd(34)} ${fmt(base).padStart(12)}   ratio ${(value / base).toFixed(2)}x`,
  );
}

async function main(): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const host = new LocalHost();
  const jsonl = join(dir, 'bench-2g.jsonl');
  let t = performance.now();
  const rows = generateJsonl(jsonl, 2 * 1024 ** 3);
  const size = statSync(jsonl).size;
  console.log(`generated ${jsonl}: ${rows} verl RL rows, ${(size / 1024 ** 3).toFixed(2)} GiB in ${(ms(t) / 1000).toFixed(1)} s`);
  try {
    // First 100 rows: a fresh reader each time, as a preview opens.
    const firstTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      t = performance.now();
      const r = await readRows(await openDataset(host, jsonl), 0, 100);
      firstTimes.push(ms(t));
      if (r.length !== 100) throw new Error('expected 100 rows');
    }
    t = performance.now();
    execFileSync('head', ['-n', '100', jsonl], { maxBuffer: 1 << 26 });
    const head = ms(t);
    const first = Math.min(...firstTimes);
    line('first 100 rows (best of 5; target < 100 ms)', first, 'head -n 100 (process spawn incl.)', head);

    t = performance.now();
    const wc = Number(execFileSync('wc', ['-l', jsonl], { encoding: 'utf8' }).trim().split(/\s+/)[0]);
    const wcMs = ms(t);
    const reader = await openDataset(host, jsonl);
    t = performance.now();
    let count = 0;
    const sources: Record<string, number> = {};
    for await (const rec of reader.rows()) {
      count++;
      const ds = (rec.value as { data_source?: string } | undefined)?.data_source;
      if (ds) sources[ds] = (sources[ds] ?? 0) + 1;
    }
    const scan = ms(t);
    if (count !== wc || count !== rows) throw new Error(`row count ${count}, wc -l ${wc}, generated ${rows}`);
    line(`scan: ${count} rows + data_source counts`, scan, 'wc -l', wcMs);
    console.log(
      `  data_source: ${JSON.stringify(sources)}; ${(size / 1024 ** 2 / (scan / 1000)).toFixed(0)} MiB/s vs wc -l ${(size / 1024 ** 2 / (wcMs / 1000)).toFixed(0)} MiB/s`,
    );
    t = performance.now();
    const s = await inspectDataset(reader, { against: null });
    line(`full inspection (zod, duplicates, budget)`, ms(t), 'wc -l', wcMs);
    if (s.rows !== rows || s.problemCount !== 0) throw new Error(`inspection: ${s.rows} rows, ${s.problemCount} problems`);
    t = performance.now();
    await readRows(reader, rows - 10, 1);
    console.log(`row ${rows - 10} after the scan (offset index seek): ${fmt(ms(t))}`);
  } finally {
    rmSync(jsonl, { force: true });
  }

  // Parquet: 500k verl rows written by our writer, scanned by our reader (every column, row objects) and by DuckDB.
  const parquet = join(dir, 'bench-500k.parquet');
  const n = 500_000;
  t = performance.now();
  writeFileSync(parquet, rowsToParquet(Array.from({ length: n }, (_, i) => row(i, 2))));
  console.log(`\nwrote ${parquet}: ${n} rows, ${(statSync(parquet).size / 1024 ** 2).toFixed(0)} MiB in ${(ms(t) / 1000).toFixed(1)} s`);
  try {
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    t = performance.now();
    const duck = (
      await db.runAndReadAll(`select data_source, count(*) as n from read_parquet('${parquet}') group by 1`)
    ).getRowObjectsJson();
    const duckGroup = ms(t);
    t = performance.now();
    await db.runAndReadAll(
      `select count(*), sum(length(prompt[1].content)), count(distinct reward_model.ground_truth) from read_parquet('${parquet}')`,
    );
    const duckAll = ms(t);
    const reader = await openDataset(host, parquet);
    t = performance.now();
    const sources: Record<string, number> = {};
    let count = 0;
    for await (const rec of reader.rows()) {
      count++;
      const ds = (rec.value as { data_source: string }).data_source;
      sources[ds] = (sources[ds] ?? 0) + 1;
    }
    const ours = ms(t);
    if (count !== n) throw new Error(`parquet rows ${count}`);
    line('parquet scan: all columns as rows + counts', ours, 'DuckDB group by data_source', duckGroup);
    line('parquet scan: all columns as rows + counts', ours, 'DuckDB reading prompt+reward cols', duckAll);
    console.log(`  ours ${JSON.stringify(sources)}; DuckDB ${JSON.stringify(duck)}`);
  } finally {
    rmSync(parquet, { force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
