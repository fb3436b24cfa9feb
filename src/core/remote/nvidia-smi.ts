import type { Problem } from '../errors/located-error';

/** The `--query-gpu` fields MedRL Studio asks for, in this order. */
const GPU_QUERY_FIELDS = [
  'index',
  'uuid',
  'name',
  'memory.used',
  'memory.total',
  'utilization.gpu',
  'temperature.gpu',
  'power.draw',
  'driver_version',
] as const;
const APPS_QUERY_FIELDS = ['pid', 'process_name', 'used_memory', 'gpu_uuid'] as const;

export const GPU_QUERY = `nvidia-smi --query-gpu=${GPU_QUERY_FIELDS.join(',')} --format=csv,noheader,nounits`;
export const APPS_QUERY = `nvidia-smi --query-compute-apps=${APPS_QUERY_FIELDS.join(',')} --format=csv,noheader,nounits`;

export interface Gpu {
  index: number;
  uuid: string;
  name: string;
  memoryUsedMiB?: number;
  memoryTotalMiB?: number;
  utilizationPercent?: number;
  temperatureC?: number;
  powerW?: number;
  driverVersion?: string;
}

export interface GpuProcess {
  pid: number;
  name: string;
  usedMemoryMiB?: number;
  gpuUuid: string;
}

/** A number from a CSV cell: `[N/A]`, `[Not Supported]` and empty cells are unknown; units (`MiB`, `%`, `W`) are dropped. */
function num(cell: string | undefined): number | undefined {
  if (cell === undefined) return undefined;
  const v = cell.trim().replace(/\s*(MiB|%|W|C)$/, '');
  if (!v || v.startsWith('[')) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** Rows of nvidia-smi CSV (`, ` separated; names have no commas); a header line (`--format=csv`) is skipped. */
function rows(text: string, width: number, what: string, source: string, problems: Problem[]): { cells: string[]; line: number }[] {
  const out: { cells: string[]; line: number }[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (!raw.trim()) return;
    const cells = raw.split(',').map((c) => c.trim());
    if (i === 0 && /^(index|pid)\b/.test(cells[0] ?? '')) return;
    if (cells.length !== width) {
      problems.push({
        file: source,
        line: i + 1,
        message: `${what}: expected ${width} comma-separated values, got ${cells.length}: ${raw.slice(0, 120)}`,
        severity: 'warning',
      });
      return;
    }
    out.push({ cells, line: i + 1 });
  });
  return out;
}

/** Parses `nvidia-smi --query-gpu=<GPU_QUERY_FIELDS>` output; bad lines become problems and the rest is kept. */
export function parseGpuQuery(text: string, source = 'nvidia-smi --query-gpu'): { gpus: Gpu[]; problems: Problem[] } {
  const problems: Problem[] = [];
  const gpus: Gpu[] = [];
  for (const { cells, line } of rows(text, GPU_QUERY_FIELDS.length, 'GPU line', source, problems)) {
    const [index, uuid, name, used, total, util, temp, power, driver] = cells;
    const idx = num(index);
    if (idx === undefined || !uuid || !name) {
      problems.push({ file: source, line, message: `GPU line: no index, uuid or name: ${cells.join(', ')}`, severity: 'warning' });
      continue;
    }
    gpus.push({
      index: idx,
      uuid,
      name,
      memoryUsedMiB: num(used),
      memoryTotalMiB: num(total),
      utilizationPercent: num(util),
      temperatureC: num(temp),
      powerW: num(power),
      driverVersion: driver && !driver.startsWith('[') ? driver : undefined,
    });
  }
  return { gpus, problems };
}

/** Parses `nvidia-smi --query-compute-apps=<APPS_QUERY_FIELDS>` output. */
export function parseAppsQuery(text: string, source = 'nvidia-smi --query-compute-apps'): { processes: GpuProcess[]; problems: Problem[] } {
  const problems: Problem[] = [];
  const processes: GpuProcess[] = [];
  for (const { cells, line } of rows(text, APPS_QUERY_FIELDS.length, 'process line', source, problems)) {
    const [pid, name, used, uuid] = cells;
    const p = num(pid);
    if (p === undefined || !uuid) {
      problems.push({ file: source, line, message: `process line: no pid or GPU uuid: ${cells.join(', ')}`, severity: 'warning' });
      continue;
    }
    processes.push({ pid: p, name: name ?? '', usedMemoryMiB: num(used), gpuUuid: uuid });
  }
  return { processes, problems };
}
