import { posix } from 'node:path';
import { shellQuote } from '../remote/shell-quote';
import type { Host } from '../remote/host';
import type { Problem } from '../errors/located-error';
import { runRecordSchema, RUN_FILES, RUN_MARKER_TOKEN, type RunRecord, type RunState } from './run-record';
import { parseRayStatus, recordedRay } from './ray-scheduler';
import { progressFromLog, type LogProgress } from './log-progress';
import { RUN_ID_PATTERN } from './run-id';
import { fieldPath, plainIssues, plainZodError } from '../errors/plain-zod';

/** Bytes of output.log the listing brings back per run (enough for the last training step). */
export const LOG_TAIL_BYTES = 4096;

/** A run as the listing sees it: its run.json, its state and the tail of its log. */
export interface RunInfo {
  host: string;
  record: RunRecord;
  state: RunState;
  exitCode?: number;
  /** Why a run failed or was lost, when the scheduler says (e.g. Slurm's TIMEOUT). */
  reason?: string;
  /** When the job ended (from the run folder), for finished runs. */
  ended?: string;
  logSize: number;
  logTail: string;
  progress: LogProgress;
}

export interface RunListing {
  runs: RunInfo[];
  problems: Problem[];
}

/** Bytes of run.json the listing reads at most (one a submit writes is under 2 KB); the small marker files get 4 KiB. */
const RECORD_MAX_BYTES = 65_536;
const SMALL_FILE_MAX_BYTES = 4096;

/**
 * One shell script that reports every run under a runs folder: run.json, exit_code, the cancelled marker, whether the
 * pid is alive, the log's size and last bytes (base64, so any byte survives), plus one `squeue` call for Slurm runs
 * and `ray job status` for active Ray runs. A whole host refresh is this one round trip. It reads only regular files
 * of a bounded size (a FIFO would block it, a huge run.json fill memory) and follows no link: one crafted run folder
 * costs only itself. System tools are called through `command -p`, so no PATH can replace them.
 */
export function listRunsScript(runsDir: string, only?: string): string {
  const f = RUN_FILES;
  if (only !== undefined && !RUN_ID_PATTERN.test(only)) throw new Error(`not a run folder name: ${only}`);
  const small = [f.exitCode, f.ended, f.cancelled, f.started].map((n) => `-name ${n}`).join(' -o ');
  return `cd ${runsDir.startsWith('~/') ? `"$HOME"/${shellQuote(runsDir.slice(2))}` : shellQuote(runsDir)} 2>/dev/null || exit 0
slurm=0; ray=""; sched=""; js=""; logs=""
# Run folders: names a run id can have, and real folders (a link is reported, not followed).
set --
for d in ${only ?? '[a-z0-9]*'}; do
  case $d in *[!a-z0-9-]*) continue;; esac
  if [ -L "$d" ]; then echo "N link $d"; elif [ -d "$d" ]; then set -- "$@" "$d"; fi
done
# The files read below, each a regular file of a bounded size; B PATH for one that is not (a link, FIFO, device, too big).
files=""
[ $# -gt 0 ] && files=$(command -p find "$@" -mindepth 1 -maxdepth 1 \\( -name ${f.record} -o -name ${f.log} -o ${small} \\) \\
  \\( -type f \\( -name ${f.log} -o -name ${f.record} -size -${RECORD_MAX_BYTES + 1}c -o ! -name ${f.record} -size -${SMALL_FILE_MAX_BYTES + 1}c \\) -print \\
  -o -exec printf 'B %s\\n' {} + \\) 2>/dev/null)
set -f; IFS='
'
for p in $files; do
  case $p in 'B '*) printf '%s\\n' "$p";; */${f.record}) js="$js $p";; */${f.log}) logs="$logs $p";; esac
done
unset IFS; set +f
# One awk pass reads every run.json (it may be pretty-printed: its lines are joined; JSON strings hold no raw line breaks or
# tabs) with the run's exit_code, ended, cancelled and started files, and prints each run's lines: R DIR, J JSON, X EXIT,
# D ENDED, C (cancelled), G PID PGID JOBID (what job.sh recorded); then P PID DIR for a pid to check (job.sh's own, else
# run.json's) and K slurm|ray DIR for an unfinished job to ask its scheduler about. Its first input (stdin, never empty)
# is the files found above: it opens no other.
# The shell only runs kill -0 and collects the K lines: its read builtin takes a byte per system call, and its pattern
# expansions over each run's JSON made a refresh of 100 runs ten times slower.
recs=$(printf '%s\\n' "$files" | command -p awk '
function field(file,   line, r) { if (!(file in ok)) return "-"; r = (getline line < file); close(file); return r < 0 ? "-" : "=" line }
function out(   x, p, g, s) {
  if (d !~ /^[a-z0-9][a-z0-9-]*$/) return
  printf "R %s\\nJ %s\\n", d, j
  g = field(d "/${f.started}")
  if (g != "-") printf "G %s\\n", substr(g, 2)
  x = field(d "/${f.exitCode}")
  if (x != "-") { printf "X %s\\n", substr(x, 2); x = field(d "/${f.ended}"); if (x != "-") printf "D %s\\n", substr(x, 2) }
  else if (j ~ /"scheduler": ?"slurm"/) printf "K slurm %s\\n", d
  else if (j ~ /"scheduler": ?"ray"/) printf "K ray %s\\n", d
  if (field(d "/${f.cancelled}") != "-") print "C"
  if (g != "-" && split(substr(g, 2), s, " ") >= 1 && s[1] ~ /^[0-9]+$/) printf "P %s %s\\n", s[1], d
  else if (match(j, /"pid": *[0-9]+/)) { p = substr(j, RSTART, RLENGTH); sub(/^"pid": */, "", p); printf "P %s %s\\n", p, d }
}
NR == FNR { ok[$0] = 1; next }
FNR == 1 { if (d != "") out(); d = FILENAME; sub("/${f.record}$", "", d); j = "" }
{ j = j " " $0 }
END { if (d != "") out() }' - $js)
printf '%s\\n' "$recs"
set -f; IFS='
'
for rec in $recs; do
  case $rec in
    'P '*) p=\${rec#P }; d=\${p#* }; kill -0 "\${p%% *}" 2>/dev/null && printf 'A %s\\n' "$d";;
    'K slurm '*) slurm=1; sched="$sched \${rec#K slurm }";;
    'K ray '*) d=\${rec#K ray }; ray="$ray $d"; sched="$sched $d";;
  esac
done
unset IFS; set +f
# Sizes and tails of every log in two commands (not per run): tail -v puts a "==> DIR/output.log <==" line before each.
set -- $logs
if [ $# -gt 0 ]; then command -p wc -c "$@" | command -p sed 's/^ */S /'; printf 'T '; command -p tail -v -c ${LOG_TAIL_BYTES} "$@" | command -p base64 | command -p tr -d '\\n'; echo; fi
if [ $slurm = 1 ]; then squeue -h -t all -o 'Q %i %T %j %r' 2>/dev/null || echo 'E squeue failed'; fi
for d in $ray; do printf 'Y %s ' "$d"; ${recordedRay('"$d"', 'job status "$d"')} 2>&1 | command -p tr '\\n' ' '; echo
done
# A job that ended while the scheduler was asked: its exit_code, read after its scheduler state.
for d in $sched; do x="$d/${f.exitCode}"; if [ -f "$x" ] && [ ! -L "$x" ]; then printf 'Z %s %s\\n' "$d" "$(command -p head -c 32 "$x" | command -p head -n 1)"; fi; done
${only === undefined ? SWEEP_SCRIPT : ''}exit 0
`;
}

/**
 * Folders without run.json: N recent|swept|kept|unmarked DIR. Only what MedRL can prove it made is ever removed: a run
 * folder whose marker holds this user's token (RUN_MARKER_TOKEN: the submit writes it in the command that creates the
 * folder, before anything else; no repository can know it), owned by this user, a minute old and holding nothing but
 * the marker and run.json.tmp: what an interrupted submit left. A run.json.tmp beside a run.json in such a folder (a
 * write cut short) goes too. Anything else is reported and kept.
 */
const SWEEP_SCRIPT = `me=$(command -p id -u); tok=""; [ -s "$HOME"/${RUN_MARKER_TOKEN} ] && tok=$(command -p head -c 64 "$HOME"/${RUN_MARKER_TOKEN})
mark() { [ -n "$tok" ] && [ -f "$1" ] && [ ! -L "$1" ] && [ "$(command -p head -c 64 "$1")" = "$tok" ]; }
for d in [a-z0-9]*; do
  case $d in *[!a-z0-9-]*) continue;; esac
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  t="$d/${RUN_FILES.record}.tmp"
  if [ -e "$d/${RUN_FILES.record}" ] || [ -L "$d/${RUN_FILES.record}" ]; then
    if [ -f "$t" ] && [ ! -L "$t" ] && mark "$d/${RUN_FILES.marker}" && [ -n "$(command -p find "$t" -prune -mmin +1)" ]; then command -p rm -f "$t"; fi
    continue
  fi
  if ! mark "$d/${RUN_FILES.marker}"; then echo "N unmarked $d"
  elif [ -z "$(command -p find "$d" -prune -mmin +1)" ]; then echo "N recent $d"
  elif [ -n "$(command -p find "$d" -prune -user "$me")" ] && [ -z "$(command -p ls -A "$d" | command -p grep -vxF -e ${RUN_FILES.marker} -e ${RUN_FILES.record}.tmp)" ] && [ ! -L "$t" ]; then
    command -p rm -f "$t" "$d/${RUN_FILES.marker}" && command -p rmdir "$d" && echo "N swept $d" || echo "N kept $d"
  else echo "N kept $d"; fi
done
`;

interface RawRun {
  dir: string;
  json: string;
  /** What job.sh recorded in `started`: its pid, process group and Slurm job id. */
  started?: string;
  alive: boolean;
  exitCode?: string;
  ended?: string;
  cancelled: boolean;
  logSize: number;
  logTail: string;
}

/** A run without a pid or job id this long after it was created never started (its submit was interrupted). */
const SUBMIT_GRACE_MS = 120_000;

/** Turns the listing script's output into runs; a bad run.json is a problem with its path, and the rest still list. */
export function parseRunListing(hostName: string, runsDir: string, out: string, now: number = Date.now()): RunListing {
  const raw: RawRun[] = [];
  const slurm = new Map<string, { state: string; reason: string }>();
  const slurmByName = new Map<string, string>();
  const problems: Problem[] = [];
  let squeueFailed = false;
  const ray = new Map<string, string>();
  for (const line of out.split('\n')) {
    const tag = line.slice(0, 2);
    const rest = line.slice(2);
    const cur = raw[raw.length - 1];
    if (tag === 'R ') raw.push({ dir: rest, json: '', alive: false, cancelled: false, logSize: 0, logTail: '' });
    else if (tag === 'J ' && cur) cur.json = rest;
    else if (tag === 'G ' && cur) cur.started = rest;
    else if (tag === 'B ') problems.push(unreadFile(hostName, runsDir, rest));
    else if (tag === 'N ') {
      const [what, dir] = rest.split(' ');
      problems.push({
        host: hostName,
        file: `${runsDir.replace(/\/$/, '')}/${dir}`,
        severity: 'warning',
        message: UNRECORDED[what as keyof typeof UNRECORDED] ?? rest,
      });
    } else if (tag === 'A ') {
      const run = raw.find((x) => x.dir === rest);
      if (run) run.alive = true;
    } else if (line === 'C' && cur) cur.cancelled = true;
    else if (tag === 'X ' && cur) cur.exitCode = rest.trim();
    else if (tag === 'D ' && cur) cur.ended = rest.trim();
    else if (tag === 'S ') {
      const [size, file] = rest.trim().split(/\s+/);
      const run = raw.find((x) => `${x.dir}/${RUN_FILES.log}` === file);
      if (run) run.logSize = Number(size) || 0;
    } else if (tag === 'T ') {
      for (const [dir, tail] of splitTails(Buffer.from(rest, 'base64'))) {
        const run = raw.find((x) => x.dir === dir);
        if (run) run.logTail = tail;
      }
    } else if (tag === 'Q ') {
      const [id, state, name, ...reason] = rest.trim().split(/\s+/);
      if (id && state) slurm.set(id, { state, reason: reason.join(' ') });
      if (id && name) slurmByName.set(name, id);
    } else if (line.startsWith('E squeue')) squeueFailed = true;
    else if (tag === 'Z ') {
      const [dir, code] = rest.split(' ');
      const run = raw.find((x) => x.dir === dir);
      if (run && code !== undefined) run.exitCode = code;
    } else if (tag === 'Y ') {
      const sp = rest.indexOf(' ');
      ray.set(rest.slice(0, sp), rest.slice(sp + 1));
    }
  }
  const runs: RunInfo[] = [];
  for (const r of raw) {
    const file = `${runsDir.replace(/\/$/, '')}/${r.dir}/${RUN_FILES.record}`;
    let record: RunRecord;
    try {
      const parsed = runRecordSchema.safeParse(JSON.parse(r.json), { error: plainZodError });
      if (!parsed.success) {
        const first = plainIssues(parsed.error.issues)[0];
        problems.push({
          host: hostName,
          file,
          severity: 'error',
          field: first && fieldPath(first.path),
          message: `not a valid run.json: ${first?.message}`,
        });
        continue;
      }
      record = withStarted(parsed.data, r.started, slurmByName);
    } catch (err) {
      // Not the parser's message: it quotes the file's first bytes, and run.json may be anything.
      if (!(err instanceof SyntaxError)) throw err;
      problems.push({ host: hostName, file, severity: 'error', message: 'not valid JSON: not a run.json a submit wrote' });
      continue;
    }
    const s = resolveState(record, r, { slurm, squeueFailed, ray }, now);
    runs.push({
      host: hostName,
      record,
      ...s,
      ...(r.ended ? { ended: r.ended } : {}),
      logSize: r.logSize,
      logTail: r.logTail,
      progress: progressFromLog(r.logTail, record.framework, record.algorithm),
    });
  }
  runs.sort((a, b) => b.record.created.localeCompare(a.record.created));
  return { runs, problems };
}

/** A file of a run folder the listing did not read (B PATH): what it needs to be, and what that cost. */
function unreadFile(host: string, runsDir: string, path: string): Problem {
  const name = posix.basename(path);
  const limit = name === RUN_FILES.log ? '' : ` of at most ${name === RUN_FILES.record ? RECORD_MAX_BYTES : SMALL_FILE_MAX_BYTES} bytes`;
  return {
    host,
    file: `${runsDir.replace(/\/$/, '')}/${path}`,
    severity: name === RUN_FILES.record ? 'error' : 'warning',
    message: `not read: not a regular file${limit} (a link, FIFO or device${limit ? ', or bigger' : ''})${name === RUN_FILES.record ? ': the folder is not listed as a run' : ''}`,
  };
}

const UNRECORDED = {
  swept: 'an interrupted submit left this run folder without run.json; no job was ever started from it: removed',
  recent: 'no run.json yet: a submit is creating this run folder',
  kept: 'a run folder without run.json that holds other files (its run.json was deleted?): not listed as a run; kept',
  unmarked: `a folder without run.json that no submit made here (it holds no ${RUN_FILES.marker} marker with this user's token): not a run; left as it is`,
  link: 'a link, not a run folder: not followed, not listed',
} as const;

/**
 * The record with what job.sh recorded itself (its pid and group; under Slurm its job id) and, for a Slurm job whose
 * id never reached run.json, the id squeue gives the job named after the run: a job is listed and cancellable even when
 * its submit died before recording it. job.sh's own record wins: it is the latest start (a service's restart).
 */
function withStarted(rec: RunRecord, started: string | undefined, slurmByName: Map<string, string>): RunRecord {
  const [pid, pgid, jobId] = (started ?? '').trim().split(/\s+/);
  const int = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) : undefined);
  const out = { ...rec };
  if (rec.scheduler === 'ssh' && int(pid) !== undefined && int(pgid) !== undefined) Object.assign(out, { pid: int(pid), pgid: int(pgid) });
  if (rec.scheduler === 'slurm' && rec.jobId === undefined) {
    const id = int(jobId) !== undefined ? jobId : slurmByName.get(rec.id);
    if (id !== undefined) out.jobId = id;
  }
  return out;
}

/** Splits `tail -v` output into each log's bytes: a header line `==> DIR/output.log <==` starts each one. */
function splitTails(all: Buffer): Map<string, string> {
  const text = all.toString('latin1');
  const header = new RegExp(`(?:^|\n)==> ([a-z0-9-]+)/${RUN_FILES.log.replace('.', '\\.')} <==\n`, 'g');
  const marks = [...text.matchAll(header)];
  const out = new Map<string, string>();
  marks.forEach((m, i) => {
    const start = m.index + m[0].length;
    const end = i + 1 < marks.length ? marks[i + 1]!.index : text.length;
    out.set(m[1]!, all.subarray(start, end).toString('utf8'));
  });
  return out;
}

type Resolved = { state: RunState; exitCode?: number; reason?: string };

function resolveState(
  rec: RunRecord,
  r: RawRun,
  sched: { slurm: Map<string, { state: string; reason: string }>; squeueFailed: boolean; ray: Map<string, string> },
  now: number,
): Resolved {
  if (r.exitCode !== undefined && /^-?\d+$/.test(r.exitCode)) {
    const code = Number(r.exitCode);
    if (code === 0) return { state: 'succeeded', exitCode: 0 };
    return r.cancelled ? { state: 'cancelled', exitCode: code } : { state: 'failed', exitCode: code };
  }
  if (r.cancelled) return { state: 'cancelled' };
  // run.json is written before the job is started, and job.sh records itself first: no record of a start after the
  // grace means no job ever ran from this folder.
  const unstarted = (): Resolved =>
    now - Date.parse(rec.created) > SUBMIT_GRACE_MS
      ? { state: 'failed', reason: 'failed to submit: the submit was interrupted before the job started (nothing ran)' }
      : { state: 'queued', reason: 'submitting: the job has not started yet' };
  if (rec.scheduler === 'ssh') {
    if (rec.pid === undefined) return unstarted();
    return r.alive ? { state: 'running' } : { state: 'lost', reason: `process ${rec.pid} ended without writing exit_code` };
  }
  if (rec.scheduler === 'slurm') {
    if (rec.jobId === undefined) return unstarted();
    const q = sched.slurm.get(rec.jobId);
    if (!q)
      return {
        state: 'lost',
        reason: sched.squeueFailed ? 'squeue failed on the host' : `Slurm job ${rec.jobId} is gone and wrote no exit_code`,
      };
    if (['PENDING', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'RESV_DEL_HOLD'].includes(q.state))
      return { state: 'queued', reason: q.reason || undefined };
    if (['RUNNING', 'CONFIGURING', 'COMPLETING', 'SUSPENDED', 'STOPPED', 'SIGNALING', 'STAGE_OUT', 'RESIZING'].includes(q.state))
      return { state: 'running' };
    if (q.state === 'CANCELLED') return { state: 'cancelled', reason: 'cancelled in Slurm' };
    if (q.state === 'COMPLETED') return { state: 'lost', reason: 'Slurm says COMPLETED but the job wrote no exit_code' };
    return { state: 'failed', reason: `Slurm ${q.state}` };
  }
  if (rec.jobId === undefined) return unstarted();
  const text = sched.ray.get(rec.id) ?? '';
  const status = parseRayStatus(text);
  switch (status) {
    case 'PENDING':
      return { state: 'queued' };
    case 'RUNNING':
      return { state: 'running' };
    case 'SUCCEEDED':
      return { state: 'succeeded' };
    case 'STOPPED':
      return { state: 'cancelled', reason: 'stopped in Ray' };
    case 'FAILED':
      return { state: 'failed', reason: 'Ray job failed' };
    default:
      return { state: 'lost', reason: `ray job status: ${text.trim().slice(0, 200) || 'no answer'}` };
  }
}

/** Every run on a host (or only the run folder `only`), in one round trip. */
export async function listRuns(host: Host, runsDir: string, only?: string): Promise<RunListing> {
  const script = listRunsScript(runsDir, only);
  let r = await host.exec(script, { timeoutMs: 60_000 });
  // An SSH channel can close without an exit status (a dropped connection): ask once more on the reconnected host.
  if (r.code === null && r.signal === null && !r.timedOut) r = await host.exec(script, { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`${host.name}: listing runs in ${runsDir} failed (exit code ${r.code}): ${r.stderr.trim()}`);
  return parseRunListing(host.name, runsDir, r.stdout);
}

/** One run's state and log tail, from its folder: one round trip. */
export async function runStatus(host: Host, record: RunRecord): Promise<RunInfo> {
  const listing = await listRuns(host, posix.dirname(record.dir), posix.basename(record.dir));
  const run = listing.runs[0];
  if (!run)
    throw new Error(
      `${host.name}: ${listing.problems[0] ? `${listing.problems[0].file}: ${listing.problems[0].message}` : `${record.dir}/${RUN_FILES.record} is gone`}`,
    );
  return run;
}
