import { posix } from 'node:path';
import { execChecked } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { exportLines, pythonPathLines, renderJobScript, secretsFromStdin } from './launch-script';
import { RUN_FILES } from './run-record';
import { expectOutput, type ReadyRun, type Scheduler } from './scheduler';
import { trainerFor } from './trainers';

/** node-env.sh: runs its arguments after the run's setup and variables (what launch.sh has): Ray's processes on each node. */
export const NODE_ENV_SCRIPT = 'node-env.sh';
/** node.sh: one task of a multi-node launcher job (accelerate, torchrun): launch.sh with this node's flags. */
export const NODE_SCRIPT = 'node.sh';
/** Ray's default GCS port on the head node (`ray start --head --port`), as in verl's Slurm example. */
const RAY_PORT = 6379;

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

/** The head node's name and IPv4 address (what `hostname --ip-address` says on it, as in verl's example), exported for every step. */
function headLines(): string[] {
  return [
    'mapfile -t medrl_nodes < <(scontrol show hostnames "$SLURM_JOB_NODELIST")',
    'export MEDRL_HEAD_NODE="${medrl_nodes[0]}"',
    "MEDRL_HEAD_ADDR=$(srun --nodes=1 --ntasks=1 -w \"$MEDRL_HEAD_NODE\" hostname --ip-address | tr ' ' '\\n' | grep -m1 '^[0-9.]*$')",
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
  const cpus = '${SLURM_CPUS_PER_TASK:+--num-cpus=$SLURM_CPUS_PER_TASK}';
  const nodes = run.spec.resources?.nodes ?? 1;
  return [
    `export RAY_ADDRESS="$MEDRL_HEAD_ADDR:${RAY_PORT}"`,
    `srun --nodes=1 --ntasks=1 -w "$MEDRL_HEAD_NODE" bash ${env} ray start --head --node-ip-address="$MEDRL_HEAD_ADDR" --port=${RAY_PORT} --num-gpus=${gpus} ${cpus} --block &`,
    `for medrl_node in "\${medrl_nodes[@]:1}"; do srun --nodes=1 --ntasks=1 -w "$medrl_node" bash ${env} ray start --address="$RAY_ADDRESS" --num-gpus=${gpus} ${cpus} --block & done`,
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
 * The `slurm` scheduler: `sbatch` with the spec's resources; state from `squeue` while Slurm remembers the job, and from
 * the run folder (exit_code) after; `scancel` to stop. sacct is not needed (clusters often run without accounting).
 */
export const slurmScheduler: Scheduler = {
  name: 'slurm',
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
