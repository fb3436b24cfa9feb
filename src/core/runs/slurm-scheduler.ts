import { posix } from 'node:path';
import { execChecked } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { exportLines, pythonPathLines, renderJobScript, secretsFromStdin } from './launch-script';
import { RUN_FILES } from './run-record';
import { expectOutput, type ReadyRun, type Scheduler } from './scheduler';
import { trainerFor } from './trainers';
import type { RunSpec } from './run-spec';
import type { Problem } from '../errors/located-error';

/** node-env.sh: runs its arguments after the run's setup and variables (what launch.sh has): Ray's processes on each node. */
export const NODE_ENV_SCRIPT = 'node-env.sh';
/** node.sh: one task of a multi-node launcher job (accelerate, torchrun): launch.sh with this node's flags. */
export const NODE_SCRIPT = 'node.sh';
/**
 * Each Ray-on-Slurm job gets its own block of 5 ports, so two jobs sharing a node never meet on Ray's fixed defaults
 * (GCS 6379, client server 10001, dashboard 8265, dashboard agent 52365): 40000 + (SLURM_JOB_ID % 4000) * 5, which stays
 * clear of MEDRL_HEAD_PORT's 20000-39999 (accelerate/torchrun jobs). Ray's other ports (node and object manager,
 * metrics, runtime env agent) are random by default, and its workers get random ports too (--min/max-worker-port=0)
 * instead of the shared 10002-19999 range.
 */
export const RAY_PORT_BLOCK = { base: 40000, jobs: 4000, size: 5 } as const;

/** `ray start`'s port flags of this job (the block's ports as shell arithmetic on MEDRL_RAY_PORT); `head` adds the head's own. */
function rayPortFlags(head: boolean): string {
  const p = (i: number) => (i === 0 ? '$MEDRL_RAY_PORT' : `$((MEDRL_RAY_PORT + ${i}))`);
  const common = `--dashboard-agent-listen-port=${p(3)} --dashboard-agent-grpc-port=${p(4)} --min-worker-port=0 --max-worker-port=0`;
  // $medrl_client: the client server's port, when Ray has its client server (see rayClusterLines).
  return head ? `--port=${p(0)} $medrl_client --dashboard-port=${p(2)} ${common}` : common;
}

/**
 * Shell lines that set medrl_cpus[i] to the CPUs Slurm gave the job on node i (the order of `scontrol show hostnames`),
 * from SLURM_JOB_CPUS_PER_NODE ("72(x2),36" is 72, 72, 36).
 */
export function nodeCpuLines(): string[] {
  return [
    'medrl_cpus=()',
    'for medrl_c in ${SLURM_JOB_CPUS_PER_NODE//,/ }; do',
    '  if [[ $medrl_c =~ ^([0-9]+)\\(x([0-9]+)\\)$ ]]; then for ((medrl_i = 0; medrl_i < BASH_REMATCH[2]; medrl_i++)); do medrl_cpus+=("${BASH_REMATCH[1]}"); done',
    '  else medrl_cpus+=("$medrl_c"); fi',
    'done',
  ];
}

/**
 * `--num-cpus` of node i's `ray start`: SLURM_CPUS_PER_TASK when the spec set cpusPerTask (one task per node), else what
 * Slurm gave the job on that node, else the batch node's SLURM_CPUS_ON_NODE; never Ray's default, every core of the node.
 */
function rayCpus(i: string): string {
  return `--num-cpus="\${SLURM_CPUS_PER_TASK:-\${medrl_cpus[${i}]:-$SLURM_CPUS_ON_NODE}}"`;
}

/**
 * How a job of more than one node starts under Slurm:
 * - `ray`: verl's PPO/GRPO driver talks to a Ray cluster: the batch script starts `ray start --head` on the first node and
 *   `ray start --address` on the others (one `srun` each), then runs job.sh on the head with RAY_ADDRESS, as verl's own
 *   examples/slurm/ray_on_slurm.slurm does (volcengine/verl@3f38806);
 * - `accelerate`: TRL (`trl SUB` / `accelerate launch`) runs once per node through `srun`, with accelerate's
 *   --num_machines/--machine_rank/--main_process_ip/--main_process_port (trl passes flags its script does not know to
 *   accelerate: trl/cli/commands/training.py, TRL 1.10);
 * - `torchrun`: verl SFT (`torchrun --nnodes`) the same way, with --node_rank/--master_addr/--master_port.
 */
function multiNodeMode(spec: ReadyRun['spec']): 'ray' | 'accelerate' | 'torchrun' | undefined {
  if ((spec.resources?.nodes ?? 1) < 2) return undefined;
  return trainerFor(spec.framework).multiNode(spec);
}

/**
 * Run on the head node with the second node's Slurm address: the head's IPv4 address the other nodes can reach. First
 * what `hostname --ip-address` says (verl's example), unless that is loopback only, as on nodes whose /etc/hosts maps
 * their own name to 127.0.1.1 (Debian's default) or 127.0.0.1; then the address the head itself uses towards the second
 * node; then its first interface address.
 */
const HEAD_ADDR_FUNCTION = [
  'medrl_head_addr() {',
  '  local a',
  "  a=$(hostname --ip-address 2>/dev/null | tr ' ' '\\n' | grep -E '^[0-9.]+$' | grep -v '^127\\.' | head -n1)",
  '  [ -n "$a" ] || a=$(ip -o -4 route get "$(getent ahostsv4 "$1" 2>/dev/null | awk \'NR == 1 { print $1 }\')" 2>/dev/null | sed -n \'s/.* src \\([0-9.]*\\).*/\\1/p\')',
  "  [ -n \"$a\" ] || a=$(hostname -I 2>/dev/null | tr ' ' '\\n' | grep -E '^[0-9.]+$' | head -n1)",
  '  echo "$a"',
  '}',
];

/** The head node's name and reachable IPv4 address (HEAD_ADDR_FUNCTION, run there), exported for every step. */
function headLines(): string[] {
  return [
    'mapfile -t medrl_nodes < <(scontrol show hostnames "$SLURM_JOB_NODELIST")',
    'export MEDRL_HEAD_NODE="${medrl_nodes[0]}"',
    ...HEAD_ADDR_FUNCTION,
    // The address slurmctld reaches the second node at (its NodeAddr, a name or an address).
    "medrl_peer=$(scontrol show node -o \"${medrl_nodes[1]}\" | tr ' ' '\\n' | sed -n 's/^NodeAddr=//p')",
    'MEDRL_HEAD_ADDR=$(srun --nodes=1 --ntasks=1 -w "$MEDRL_HEAD_NODE" bash -c "$(declare -f medrl_head_addr)"\'; medrl_head_addr "$1"\' bash "$medrl_peer")',
    'export MEDRL_HEAD_ADDR="${MEDRL_HEAD_ADDR:-$MEDRL_HEAD_NODE}"',
    // One port per job, so two jobs sharing a node do not meet (Slurm job ids are unique on the cluster).
    'export MEDRL_HEAD_PORT=$((20000 + SLURM_JOB_ID % 20000))',
    'echo "medrl: nodes ${medrl_nodes[*]}; head $MEDRL_HEAD_NODE ($MEDRL_HEAD_ADDR)"',
  ];
}

/** A Ray cluster over the job's nodes (head first, then one worker per other node), up before job.sh starts the driver. */
function rayClusterLines(run: ReadyRun): string[] {
  const env = shellQuote(posix.join(run.dir, NODE_ENV_SCRIPT));
  const gpus = run.spec.resources?.gpusPerNode ?? 1;
  const nodes = run.spec.resources?.nodes ?? 1;
  const { base, jobs, size } = RAY_PORT_BLOCK;
  return [
    `export MEDRL_RAY_PORT=$((${base} + SLURM_JOB_ID % ${jobs} * ${size}))`,
    'export RAY_ADDRESS="$MEDRL_HEAD_ADDR:$MEDRL_RAY_PORT"',
    // Ray starts its client server (default port 10001) only with ray[client] (grpc importable), and refuses
    // --ray-client-server-port without it (ray/_private/parameter.py, Ray 2.58).
    `if bash ${env} python3 -c 'import grpc' >/dev/null 2>&1; then medrl_client="--ray-client-server-port=$((MEDRL_RAY_PORT + 1))"; else medrl_client=""; fi`,
    ...nodeCpuLines(),
    'echo "medrl: Ray GCS $RAY_ADDRESS, CPUs per node ${SLURM_CPUS_PER_TASK:-${medrl_cpus[*]:-$SLURM_CPUS_ON_NODE}}"',
    `srun --nodes=1 --ntasks=1 -w "$MEDRL_HEAD_NODE" bash ${env} ray start --head --node-ip-address="$MEDRL_HEAD_ADDR" ${rayPortFlags(true)} --num-gpus=${gpus} ${rayCpus('0')} --block &`,
    `for ((medrl_n = 1; medrl_n < \${#medrl_nodes[@]}; medrl_n++)); do srun --nodes=1 --ntasks=1 -w "\${medrl_nodes[medrl_n]}" bash ${env} ray start --address="$RAY_ADDRESS" ${rayPortFlags(false)} --num-gpus=${gpus} ${rayCpus('medrl_n')} --block & done`,
    // verl's example sleeps; waiting until every node has joined also catches a cluster that never comes up.
    'medrl_waited=0',
    `until [ "$(bash ${env} python3 -c 'import ray; ray.init(address="auto", logging_level="ERROR"); print(sum(1 for n in ray.nodes() if n["Alive"]))' 2>/dev/null | tail -n1)" = ${nodes} ]; do`,
    `  if [ $medrl_waited -ge 600 ]; then echo "medrl: the Ray cluster did not reach ${nodes} nodes in 600 s (ray start logs above)" >&2; exit 1; fi`,
    '  sleep 5; medrl_waited=$((medrl_waited + 5))',
    'done',
  ];
}

/** job.sbatch: the spec's resources as #SBATCH lines (values are checked by the spec schema), then job.sh. */
export function renderSbatchScript(run: ReadyRun): string {
  const r = run.spec.resources;
  const lines = ['#!/usr/bin/env bash', `#SBATCH --job-name=${run.id}`, `#SBATCH --nodes=${r?.nodes ?? 1}`, '#SBATCH --ntasks-per-node=1'];
  const gpus = r?.gpusPerNode ?? 1;
  if (gpus > 0) lines.push(`#SBATCH --gres=gpu:${gpus}`);
  if (r?.cpusPerTask) lines.push(`#SBATCH --cpus-per-task=${r.cpusPerTask}`);
  if (r?.memory) lines.push(`#SBATCH --mem=${r.memory}`);
  if (r?.partition) lines.push(`#SBATCH --partition=${r.partition}`);
  if (r?.time) lines.push(`#SBATCH --time=${r.time}`);
  if (r?.account) lines.push(`#SBATCH --account=${r.account}`);
  lines.push("# output.log and exit_code are written by job.sh; Slurm's own messages go to slurm-<jobid>.out");
  const secrets = shellQuote(posix.join(run.dir, RUN_FILES.secrets));
  // The run's secrets come from a 0600 file the submit wrote, read and deleted here, so they are never in Slurm's job
  // record (sbatch keeps the environment it was run with); srun passes them on to every step of the job.
  lines.push('umask 077', `if [ -f ${secrets} ]; then ${secretsFromStdin()} < ${secrets}; rm -f ${secrets}; fi`);
  const mode = multiNodeMode(run.spec);
  if (mode) lines.push(`# ${r?.nodes} nodes (${mode}): this script runs on the first one`, ...headLines());
  if (mode === 'ray') lines.push(...rayClusterLines(run));
  lines.push(`exec bash ${shellQuote(posix.join(run.dir, 'job.sh'))}`, '');
  return lines.join('\n');
}

/** node.sh: launch.sh with this task's launcher flags; task 0 writes output.log, the others output-node<N>.log. */
function renderNodeScript(run: ReadyRun, mode: 'accelerate' | 'torchrun'): string {
  const nodes = run.spec.resources?.nodes ?? 1;
  const flags =
    mode === 'accelerate'
      ? `--num_machines ${nodes} --machine_rank "$SLURM_PROCID" --main_process_ip "$MEDRL_HEAD_ADDR" --main_process_port "$MEDRL_HEAD_PORT"`
      : // torch.distributed.run: --node_rank, --master_addr, --master_port (the flags torchrun documents for multi-node).
        `--node_rank="$SLURM_PROCID" --master_addr="$MEDRL_HEAD_ADDR" --master_port="$MEDRL_HEAD_PORT"`;
  const q = (f: string) => shellQuote(posix.join(run.dir, f));
  return [
    '#!/usr/bin/env bash',
    `# One task of a ${nodes}-node job (srun starts one per node): launch.sh with this node's ${mode} flags.`,
    `if [ "$SLURM_PROCID" = 0 ]; then medrl_log=${q(RUN_FILES.log)}; else medrl_log=${shellQuote(`${run.dir}/output-node`)}"$SLURM_PROCID.log"; fi`,
    `echo "medrl: node $SLURM_PROCID of ${nodes} on $(hostname), head $MEDRL_HEAD_ADDR:$MEDRL_HEAD_PORT" > "$medrl_log"`,
    `exec bash ${q(RUN_FILES.launch)} ${flags} >> "$medrl_log" 2>&1 < /dev/null`,
    '',
  ].join('\n');
}

/** Every file a Slurm job needs in its run folder; a multi-node job replaces job.sh's launch line. */
function slurmFiles(run: ReadyRun, setup: string[]): Record<string, string> {
  const files: Record<string, string> = { [RUN_FILES.sbatch]: renderSbatchScript(run) };
  const mode = multiNodeMode(run.spec);
  if (mode === 'ray') {
    // Ray's workers start under `ray start`, not under launch.sh: they get the run's setup and variables here (the
    // secrets come with sbatch's environment, which srun passes on).
    files[NODE_ENV_SCRIPT] = [
      '#!/usr/bin/env bash',
      "# Runs its arguments with the run's setup and variables (what launch.sh has): Ray's processes on each node.",
      ...setup,
      ...exportLines(run.env),
      ...pythonPathLines(run.pythonPath),
      'exec "$@"',
      '',
    ].join('\n');
  } else if (mode) {
    files[NODE_SCRIPT] = renderNodeScript(run, mode);
    // --kill-on-bad-exit: one node failing stops the others instead of leaving them waiting on it.
    files['job.sh'] = renderJobScript(
      run.dir,
      `srun --kill-on-bad-exit=1 bash ${shellQuote(posix.join(run.dir, NODE_SCRIPT))} < /dev/null`,
    );
  }
  return files;
}

/**
 * A Slurm job asks for the CPUs and memory the spec gives; a spec that gives neither gets the partition's defaults
 * (DefCpuPerNode/DefMemPerCPU in slurm.conf: often one CPU and a small share of memory), which a TRL job's data loading
 * and tokenizing, or verl's Ray workers (their --num-cpus follows the job's CPUs), soon run short of. Said at each field.
 */
export function slurmResourceProblems(spec: RunSpec, specFile: string): Problem[] {
  const r = spec.resources;
  const out: Problem[] = [];
  const what = spec.framework === 'trl' ? 'TRL' : 'verl';
  if (r?.cpusPerTask === undefined)
    out.push({
      file: specFile,
      field: 'resources.cpusPerTask',
      severity: 'warning',
      message: `the Slurm job asks for no CPUs, so it gets the partition's default CPUs (often 1 per node) and ${what} runs on those: set resources.cpusPerTask (e.g. 16)`,
    });
  if (r?.memory === undefined)
    out.push({
      file: specFile,
      field: 'resources.memory',
      severity: 'warning',
      message: `the Slurm job asks for no memory, so it gets the partition's default memory per node (DefMemPerCPU/DefMemPerNode, often a few GB): set resources.memory (e.g. 200G)`,
    });
  return out;
}

/**
 * The `slurm` scheduler: `sbatch` with the spec's resources; state from `squeue` while Slurm remembers the job, and from
 * the run folder (exit_code) after; `scancel` to stop. sacct is not needed (clusters often run without accounting).
 */
export const slurmScheduler: Scheduler = {
  name: 'slurm',
  problems: slurmResourceProblems,
  files: slurmFiles,
  async start(host, run, secrets) {
    // sbatch stores the environment it runs with in the job's record: the secrets go to a private file instead (over
    // stdin, umask 077), which job.sbatch reads and deletes when the job starts. The Slurm job's files get this umask too.
    const file = shellQuote(posix.join(run.dir, RUN_FILES.secrets));
    const script = [
      `cd ${shellQuote(run.dir)} || exit 1`,
      'umask 077',
      ...(secrets ? [`cat > ${file}.tmp && mv ${file}.tmp ${file}`] : []),
      // A job that was not queued never reads the file: it goes.
      `sbatch --parsable --output=${shellQuote(posix.join(run.dir, 'slurm-%j.out'))} ${shellQuote(posix.join(run.dir, RUN_FILES.sbatch))} || { c=$?; rm -f ${file}; exit $c; }`,
    ].join('\n');
    const r = await execChecked(host, script, { stdin: secrets, timeoutMs: 60_000 });
    return { jobId: expectOutput(host, 'sbatch', r.stdout, /^(\d+)(;\S+)?$/m)[1] };
  },
  async cancel(host, record) {
    // A job whose id never reached run.json (the submit died after sbatch) is found by its name, the run id; one
    // cancelled before it starts also finds the `cancelled` marker (written first) and does not run.
    // A job cancelled while pending never reads its secrets file: it goes too.
    const which = record.jobId ? shellQuote(record.jobId) : `--name=${shellQuote(record.id)}`;
    await execChecked(host, `scancel ${which} && rm -f ${shellQuote(posix.join(record.dir, RUN_FILES.secrets))}`, { timeoutMs: 30_000 });
  },
};
