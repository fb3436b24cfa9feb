import type { Host } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import type { Problem } from '../errors/located-error';
import type { RunSpec } from './run-spec';
import type { RunRecord } from './run-record';
import { trainerFor } from './trainers';

/** A file the run needs on the host, with the spec field that names it. */
export interface NeededFile {
  field: string;
  path: string;
}

interface HostCheckInputs {
  spec: RunSpec;
  specFile: string;
  scheduler: RunRecord['scheduler'];
  workdir: string;
  setup: string[];
  files: NeededFile[];
}

/** What the checks found: the problems, and the trainer's version on the host when it is installed. */
interface HostCheckResult {
  problems: Problem[];
  version?: string;
  /** DeepSpeed's version on the host, when the run's accelerate config uses DeepSpeed and it is installed. */
  deepspeed?: string;
}

const MARK = '@@medrl';

/**
 * Prints `DISTRIBUTED_TYPE ZERO_STAGE DEEPSPEED_VERSION` (each `-` when absent) for an accelerate config file: its
 * distributed_type, the ZeRO stage from deepspeed_config.zero_stage or from the JSON of deepspeed_config_file
 * (zero_optimization.stage, relative to the working folder as accelerate reads it), and DeepSpeed's installed version
 * (importlib.metadata: nothing imported). Standard library, plus PyYAML when there (accelerate depends on it).
 */
const DEEPSPEED_PROBE = String.raw`
import json, re, sys
from importlib import metadata
try:
    ds = metadata.version("deepspeed")
except Exception:
    ds = "-"
dist, stage = "-", "-"
try:
    text = open(sys.argv[1]).read()
    try:
        import yaml
        c = yaml.safe_load(text) or {}
    except ImportError:
        c = {"distributed_type": (re.findall(r"^distributed_type:\s*(\S+)", text, re.M) or [None])[0],
             "deepspeed_config": {k: v for k, v in re.findall(r"^\s+(zero_stage|deepspeed_config_file):\s*(\S+)", text, re.M)}}
    dist = str(c.get("distributed_type") or "-").upper()
    d = c.get("deepspeed_config") or {}
    if d.get("deepspeed_config_file"):
        stage = str(json.load(open(str(d["deepspeed_config_file"]).strip("'\""))).get("zero_optimization", {}).get("stage", "-"))
    elif d.get("zero_stage") is not None:
        stage = str(d["zero_stage"])
except Exception:
    pass
print(dist, stage, ds)
`;

/** The checks as one bash script (one round trip): the workdir, each file, GPUs, the framework and scheduler commands. */
function hostCheckScript(inp: HostCheckInputs): string {
  const { spec } = inp;
  const lines = [
    `cd ${shellQuote(inp.workdir)} 2>/dev/null || echo '${MARK} W'`,
    ...inp.setup.map((l) => `${l} >/dev/null 2>&1 || echo '${MARK} U'`),
  ];
  inp.files.forEach((f, i) => lines.push(`[ -e ${shellQuote(f.path)} ] || echo '${MARK} M ${i}'`));
  const gpus = spec.resources?.gpusPerNode ?? 1;
  // On Slurm and Ray the GPUs are on other nodes: only a detached process on this host needs them here.
  if (inp.scheduler === 'ssh' && gpus > 0) lines.push(`echo "${MARK} G $(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')"`);
  const trainer = trainerFor(spec.framework);
  const installed = trainer.installCheck(spec);
  lines.push(`${installed.test} >/dev/null 2>&1 || echo ${shellQuote(`${MARK} F ${installed.what}`)}`);
  lines.push(
    `echo "${MARK} V $(python3 -c 'import sys; from importlib import metadata; print(metadata.version(sys.argv[1]))' ${shellQuote(trainer.distribution)} 2>/dev/null)"`,
  );
  const accelerate = inp.files.find((f) => f.field === 'entry.accelerateConfig');
  if (accelerate) lines.push(`echo "${MARK} Z $(python3 -c ${shellQuote(DEEPSPEED_PROBE)} ${shellQuote(accelerate.path)} 2>/dev/null)"`);
  if (inp.scheduler === 'slurm') lines.push(`command -v sbatch >/dev/null 2>&1 || echo '${MARK} S sbatch'`);
  if (inp.scheduler === 'ray') lines.push(`command -v ray >/dev/null 2>&1 || echo '${MARK} S ray'`);
  return lines.join('\n');
}

/**
 * Checks what the run needs on its host before anything is written there: files exist, enough GPUs, the framework
 * importable after the setup lines, the scheduler's command present. Every failure is a problem naming the spec field.
 */
export async function checkHost(host: Host, inp: HostCheckInputs): Promise<HostCheckResult> {
  const r = await host.exec(`bash -c ${shellQuote(hostCheckScript(inp))}`, { timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`${host.name}: the checks before submitting failed to run (exit code ${r.code}): ${r.stderr.trim()}`);
  const at = { host: host.name, file: inp.specFile };
  const problems: Problem[] = [];
  let version: string | undefined;
  let deepspeedVersion: string | undefined;
  const gpus = inp.spec.resources?.gpusPerNode ?? 1;
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith(`${MARK} `)) continue;
    const [tag, ...rest] = line.slice(MARK.length + 1).split(' ');
    const arg = rest.join(' ');
    if (tag === 'W')
      problems.push({
        ...at,
        field: 'workdir',
        severity: 'error',
        message: `the working directory ${inp.workdir} does not exist on ${host.name}`,
      });
    else if (tag === 'U')
      problems.push({
        ...at,
        field: 'setup',
        severity: 'error',
        message: `a setup line failed on ${host.name} (medrl.yaml host setup or the spec's setup)`,
      });
    else if (tag === 'M') {
      const f = inp.files[Number(arg)];
      if (f) problems.push({ ...at, field: f.field, severity: 'error', message: `${f.path} does not exist on ${host.name}` });
    } else if (tag === 'G' && Number(arg) < gpus) {
      problems.push({
        ...at,
        field: 'resources.gpusPerNode',
        severity: 'error',
        message: `the run needs ${gpus} GPU(s) but ${host.name} has ${arg} (nvidia-smi -L)`,
      });
    } else if (tag === 'F')
      problems.push({
        ...at,
        field: 'framework',
        severity: 'error',
        message: `${inp.spec.framework} is not available on ${host.name} after the setup lines: ${arg} failed`,
      });
    else if (tag === 'V') version = arg.trim() || undefined;
    else if (tag === 'Z') {
      const [dist = '-', stage = '-', deepspeed = '-'] = arg.trim().split(/\s+/);
      const file = inp.files.find((f) => f.field === 'entry.accelerateConfig')!.path;
      if (dist === 'DEEPSPEED' && deepspeed === '-')
        problems.push({
          ...at,
          field: 'entry.accelerateConfig',
          severity: 'error',
          message: `${file} is a DeepSpeed${stage === '-' ? '' : ` ZeRO-${stage}`} config (distributed_type: DEEPSPEED), but DeepSpeed is not installed on ${host.name} after the setup lines: accelerate launch would fail there. Install it (pip install deepspeed) in the run's environment, or use an accelerate config without DeepSpeed (e.g. FSDP)`,
        });
      else if (dist === 'DEEPSPEED') deepspeedVersion = deepspeed;
    } else if (tag === 'S')
      problems.push({
        ...at,
        field: 'scheduler',
        severity: 'error',
        message: `the ${inp.scheduler} scheduler needs the ${arg} command on ${host.name}`,
      });
  }
  return { problems, version, ...(deepspeedVersion ? { deepspeed: deepspeedVersion } : {}) };
}
