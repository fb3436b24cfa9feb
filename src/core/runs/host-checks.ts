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
  /** Ray: the folder the run folder (and its uploaded reward file) is made in, checked on every node with the files. */
  runsDir?: string;
  /** Ray: medrl.yaml's sharedFilesystem for the host: true, or the path prefixes every node mounts (not checked). */
  shared?: boolean | string[];
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

/**
 * Runs one task on every alive node of the Ray cluster (pinned with NodeAffinitySchedulingStrategy, soft=False, and no
 * CPU so a busy node still runs it) that says which of the paths (argv[1], JSON) it cannot see. Only paths this host
 * sees are asked about (the others are the file checks' to report). Seeing the same path is not enough: a node's own
 * /scratch or /tmp has the runs folder's path too. So a node must see a file's size and modification time as this host
 * does, and, in a folder, a marker file this probe makes there for the check (and removes). Prints one JSON line:
 * {"nodes": [{"node" (its hostname), "ip", "missing"}]}, or {"error"} when Ray cannot be imported or reached.
 * RAY_ADDRESS may be the dashboard's http:// address (what `ray job submit` takes): ray.init then finds the cluster this
 * host runs ("auto").
 */
const RAY_NODES_PROBE = String.raw`
import json, os, signal, sys, tempfile
signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # timeout's TERM: remove the markers (finally) before going
def signature(p):
    st = os.stat(p)
    return None if os.path.isdir(p) else [st.st_size, st.st_mtime_ns]
def probe(items):
    try:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    except Exception as e:
        return {"error": "ray is not importable in python3 after the setup lines (%s)" % type(e).__name__}
    address = os.environ.get("RAY_ADDRESS", "")
    # A GCS address (host:port) is the cluster; the dashboard's http:// one (what ray job submit takes) is not: the
    # cluster this host runs is found then ("auto"). ray.init(address="auto") would ignore RAY_ADDRESS and read the last
    # cluster started on this machine instead.
    if address.startswith(("http://", "https://")) or not address:
        address = "auto"
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    except Exception as e:
        return {"error": "cannot connect to the Ray cluster at %s (%s: %s)" % (address, type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")}
    @ray.remote(num_cpus=0)
    def look(items):
        import socket
        def seen(p, marker, sig):
            try:
                return os.path.exists(p) and (marker is None or os.path.exists(marker)) and (sig is None or signature(p) == sig)
            except OSError:
                return False
        return {"host": socket.gethostname(), "missing": [p for p, marker, sig in items if not seen(p, marker, sig)]}
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    refs = [look.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(items) for n in nodes]
    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=60)
    out = []
    for n, r in zip(nodes, refs):
        e = {"node": n.get("NodeManagerHostname") or n["NodeID"], "ip": n.get("NodeManagerAddress"), "missing": None}
        try:
            if r in ready:
                e.update(ray.get(r))
                e["node"] = e.pop("host")
        except Exception:
            pass
        out.append(e)
    return {"nodes": out}
items = []
try:
    for p in json.loads(sys.argv[1]):
        if not os.path.exists(p):
            continue
        marker = None
        if os.path.isdir(p):
            try:
                fd, marker = tempfile.mkstemp(prefix=".medrl-shared-check-", dir=p)
                os.close(fd)
            except OSError:
                marker = None  # a folder this user cannot write: its path is all there is to compare
        items.append([p, marker, signature(p)])
    print(json.dumps(probe(items)))
finally:
    for _, marker, _ in items:
        if marker:
            os.unlink(marker)
`;

/** The run's files that every Ray node must see (what medrl.yaml does not declare shared), with the runs folder. */
function rayNodePaths(inp: HostCheckInputs): NeededFile[] {
  if (inp.scheduler !== 'ray' || inp.shared === true) return [];
  const prefixes = Array.isArray(inp.shared) ? inp.shared.map((p) => p.replace(/\/+$/, '')) : [];
  const shared = (path: string) => prefixes.some((p) => path === p || path.startsWith(`${p}/`));
  const all = [...inp.files, ...(inp.runsDir ? [{ field: 'runsDir', path: inp.runsDir }] : [])];
  return all.filter((f) => !shared(f.path));
}

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
  const onNodes = rayNodePaths(inp);
  if (onNodes.length)
    lines.push(
      `echo "${MARK} R $(timeout -k 5 60 python3 -c ${shellQuote(RAY_NODES_PROBE)} ${shellQuote(JSON.stringify(onNodes.map((f) => f.path)))} 2>/dev/null | tail -n1)"`,
    );
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
    else if (tag === 'R') problems.push(...rayNodeProblems(host.name, at, rayNodePaths(inp), arg));
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

/** What the Ray probe's JSON line says: each path a node cannot see, at its spec field (the runs folder at `runsDir`). */
function rayNodeProblems(hostName: string, at: { host: string; file: string }, files: NeededFile[], line: string): Problem[] {
  let r: { error?: string; nodes?: { node: string; ip?: string; missing: string[] | null }[] };
  try {
    r = JSON.parse(line.trim() || '{}') as typeof r;
  } catch {
    r = {};
  }
  const how = `declare the paths every node mounts in medrl.yaml (hosts.${hostName}.sharedFilesystem) to skip this check`;
  if (!r.nodes)
    return [
      {
        ...at,
        field: 'scheduler',
        severity: 'warning',
        message: `could not check that every node of ${hostName}'s Ray cluster sees the run's files: ${r.error ?? 'the check printed nothing (timed out after 60 s?)'}; ${how}`,
      },
    ];
  const problems: Problem[] = [];
  for (const n of r.nodes) {
    const where = `Ray node ${n.node}${n.ip && n.ip !== n.node ? ` (${n.ip})` : ''}`;
    if (n.missing === null) {
      problems.push({
        ...at,
        field: 'scheduler',
        severity: 'warning',
        message: `${where} did not answer within 60 s: its files were not checked`,
      });
      continue;
    }
    for (const path of n.missing) {
      const field = files.find((f) => f.path === path)?.field ?? 'scheduler';
      const what = field === 'runsDir' ? `the runs folder ${path} (the run folder and its uploaded reward file go there)` : path;
      problems.push({
        ...at,
        field: field === 'runsDir' ? 'host' : field,
        severity: 'error',
        message: `${what} is on ${hostName} but ${where} cannot see it: Ray runs the job's workers on every node, so put it on a filesystem every node mounts, or ${how} if it is shared`,
      });
    }
  }
  return problems;
}
