import { z } from 'zod';
import type { ResolvedHost } from '../config/workspace-config';
import type { Host } from './host';
import { hostPrelude } from './host-prelude';
import { shellQuote } from './shell-quote';

/** Python distributions the trainers need, by the name users know them (pip names). */
const CHECKED_PACKAGES = [
  'torch',
  'vllm',
  'sglang',
  'verl',
  'trl',
  'transformers',
  'accelerate',
  'deepspeed',
  'flash-attn',
  'ray',
] as const;

/**
 * Runs on the host with python3 and the standard library only: versions from importlib.metadata (nothing is imported, so
 * it takes well under a second even with torch installed), CUDA from nvcc or nvidia-smi, the driver and GPU count from nvidia-smi.
 */
const CHECK_SCRIPT = String.raw`
import json, platform, re, shutil, subprocess, sys
from importlib import metadata
def version(name):
    for n in (name, name.replace('-', '_')):
        try:
            return metadata.version(n)
        except metadata.PackageNotFoundError:
            pass
    return None
def run(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=20).stdout
    except Exception:
        return ''
out = {'python': platform.python_version(), 'executable': sys.executable, 'packages': {n: version(n) for n in json.loads(sys.argv[1])}}
smi = shutil.which('nvidia-smi')
gpus = [l for l in run([smi, '-L']).splitlines() if l.startswith('GPU ')] if smi else []
out['gpuCount'] = len(gpus)
out['gpuNames'] = [re.sub(r'^GPU \d+: (.*?)( \(UUID: .*\))?$', r'\1', l) for l in gpus]
out['driver'] = (run([smi, '--query-gpu=driver_version', '--format=csv,noheader']).splitlines() or [None])[0] if smi else None
m = re.search(r'release ([0-9.]+)', run(['nvcc', '--version'])) if shutil.which('nvcc') else None
if not m and smi:
    m = re.search(r'CUDA Version: ([0-9.]+)', run([smi]))
out['cuda'] = m.group(1) if m else None
print(json.dumps(out))
`;

/** What the check prints: also a run's `environment` in its provenance.json (runs/provenance.ts). */
export const environmentSchema = z.object({
  python: z.string(),
  executable: z.string(),
  packages: z.record(z.string(), z.string().nullable()),
  gpuCount: z.number(),
  /** Each GPU's model as nvidia-smi -L names it. */
  gpuNames: z.array(z.string()),
  driver: z.string().nullable(),
  cuda: z.string().nullable(),
});

export interface EnvReport extends z.output<typeof environmentSchema> {
  host: string;
  warnings: string[];
}

/**
 * The torch version each vLLM release pins (`torch==` in vLLM's requirements-cuda.txt / requirements/cuda.txt at the
 * release tag, github.com/vllm-project/vllm). A different torch makes vLLM's compiled kernels fail to load.
 */
const VLLM_TORCH_PINS: Record<string, string> = {
  '0.6.3': '2.4.0',
  '0.6.4': '2.5.1',
  '0.6.5': '2.5.1',
  '0.6.6': '2.5.1',
  '0.7.0': '2.5.1',
  '0.7.1': '2.5.1',
  '0.7.2': '2.5.1',
  '0.7.3': '2.5.1',
  '0.8.0': '2.6.0',
  '0.8.1': '2.6.0',
  '0.8.2': '2.6.0',
  '0.8.3': '2.6.0',
  '0.8.4': '2.6.0',
  '0.8.5': '2.6.0',
  '0.9.0': '2.7.0',
  '0.9.1': '2.7.0',
  '0.9.2': '2.7.0',
  '0.10.0': '2.7.1',
  '0.10.1': '2.7.1',
  '0.10.2': '2.8.0',
  '0.11.0': '2.8.0',
};

/** `2.6.0+cu124` → `2.6.0`; `0.8.5.post1` → `0.8.5`. */
function release(v: string): string {
  return /^\d+(\.\d+){0,2}/.exec(v)?.[0] ?? v;
}

/** Known bad combinations, each with what to do. */
export function envWarnings(r: Pick<EnvReport, 'packages' | 'gpuCount' | 'python'>): string[] {
  const p = r.packages;
  const w: string[] = [];
  const vllm = p.vllm ? release(p.vllm) : undefined;
  const torch = p.torch ? release(p.torch) : undefined;
  if (vllm === '0.8.4' && p.verl) {
    w.push(
      "vLLM 0.8.4 breaks LoRA training with verl: vLLM's LoRALRUCache has no _LRUCache__update (AttributeError at the first rollout). Use vLLM 0.8.3 or 0.8.5+.",
    );
  }
  if (vllm && torch) {
    const pin = VLLM_TORCH_PINS[vllm];
    if (pin && pin !== torch)
      w.push(
        `vLLM ${p.vllm} is built for torch ${pin}, but torch ${p.torch} is installed: vLLM's kernels will fail to load. Install torch==${pin} or the vLLM release built for torch ${torch}.`,
      );
  }
  if (p.vllm && !p.torch) w.push(`vLLM ${p.vllm} is installed without torch.`);
  if ((p.vllm || p.sglang || p['flash-attn']) && r.gpuCount === 0)
    w.push('vLLM/SGLang/flash-attn are installed but nvidia-smi shows no GPU on this host.');
  if (!p.verl && !p.trl)
    w.push(
      "Neither verl nor trl is installed in this Python (add the environment to the host's setup: in medrl.yaml, e.g. `source ~/venv/bin/activate`).",
    );
  return w;
}

/** The check's Python and its arguments, for a script on the host that runs it in its own process (a run's provenance). */
export function environmentCheckProgram(): { script: string; args: string[] } {
  return { script: CHECK_SCRIPT, args: [JSON.stringify(CHECKED_PACKAGES)] };
}

/** Checks a host's training environment in one round trip (after the host's setup lines). */
export async function checkEnvironment(host: Host, entry: Pick<ResolvedHost, 'setup' | 'env'>): Promise<EnvReport> {
  const r = await host.exec(`${hostPrelude(entry)}\npython3 - ${shellQuote(JSON.stringify(CHECKED_PACKAGES))}`, {
    stdin: CHECK_SCRIPT,
    timeoutMs: 60_000,
  });
  if (r.code === 127) throw new Error(`${host.name}: python3 not found (after the host's setup lines): ${r.stderr.trim()}`);
  if (r.code !== 0)
    throw new Error(`${host.name}: the environment check failed (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-3).join(' ')}`);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    throw new Error(`${host.name}: the environment check printed no JSON: ${line.slice(0, 200)}`);
  }
  const parsed = environmentSchema.parse(data);
  return { host: host.name, ...parsed, warnings: envWarnings(parsed) };
}
