import type { Host } from '../remote/host';
import { datasetFormatOf, type DatasetFormat, type DatasetReader } from './dataset-reader';
import { JsonlReader } from './jsonl-reader';
import { openJsonDataset } from './json-reader';
import { openParquetDataset } from './parquet-reader';
import { openCsvDataset } from './csv-reader';

/** Opens a dataset file on a host by its extension (or `format`). Reads only the parquet footer or nothing until rows are asked for (JSON is parsed whole). */
export async function openDataset(host: Host, path: string, format?: DatasetFormat): Promise<DatasetReader> {
  const fmt = format ?? datasetFormatOf(path);
  if (!fmt) throw new Error(`${host.name}:${path}: not a dataset file (expected .json, .jsonl, .parquet or .csv)`);
  const { size, kind } = await host.stat(path);
  if (kind !== 'file') throw new Error(`${host.name}:${path}: not a file`);
  switch (fmt) {
    case 'jsonl':
      return new JsonlReader(host, path, size);
    case 'json':
      return openJsonDataset(host, path, size);
    case 'parquet':
      return openParquetDataset(host, path, size);
    case 'csv':
      return openCsvDataset(host, path, size);
  }
}
