import type { Host } from '../remote/host';
import { shellQuote } from '../remote/shell-quote';
import { hostPrelude } from '../remote/host-prelude';
import { environmentCheckProgram, environmentSchema } from '../remote/env-check';
import { fieldPath } from '../errors/plain-zod';
import type { NeededFile } from './host-checks';
import type { HostFacts } from './provenance';

/** Files up to this size are hashed whole; a larger one by its first and last EDGE bytes and its size. */
export const HASH_LIMIT = 2 * 1024 ** 3;
const EDGE = 64 * 1024 ** 2;

/**
 * Runs on the host with python3's standard library (pyarrow only when importable, for parquet row counts): the
 * environment check (env-check.ts's own script, run in this process: one Python start, not two), each data file's size,
 * mtime, sha256 (streamed, 1 MiB at a time) and row count, the model's config.json sha256 or the revision the Hugging
 * Face cache resolves a hub id to, and the workdir's git commit and dirtiness. Prints one JSON line.
 */
const PROVENANCE_SCRIPT = String.raw`
import contextlib, csv, datetime, hashlib, io, json, os, subprocess, sys
inp = json.loads(sys.argv[1])
LIMIT, EDGE = inp['limit'], inp['edge']

def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat().replace('+00:00', 'Z')

def digest(path, size):
    """sha256 and line count of a file read once; past LIMIT its ends and size only, and no line count."""
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        if size > LIMIT:
            h.update(f.read(EDGE))
            f.seek(size - EDGE)
            h.update(f.read(EDGE))
            h.update(str(size).encode())
            return h.hexdigest(), None
        lines, last = 0, b'\n'
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
            lines += chunk.count(b'\n')
            last = chunk[-1:]
    return h.hexdigest(), lines + (last != b'\n')

def rows(path, lines):
    ext = os.path.splitext(path)[1].lower()
    if ext in ('.jsonl', '.csv'):
        if lines is None:
            return None, 'not counted: the file is over the size limit'
        if ext == '.jsonl':
            return lines, 'lines'
        # A quoted field may hold line breaks (clinical notes do): records are counted as Python's csv module reads them.
        csv.field_size_limit(sys.maxsize)
        try:
            with open(path, newline='', encoding='utf-8', errors='replace') as f:
                return max(sum(1 for _ in csv.reader(f)) - 1, 0), 'CSV records after the header'
        except csv.Error as e:
            return None, 'not counted: not CSV as Python reads it: ' + str(e)[:200]
    if ext == '.parquet':
        try:
            import pyarrow.parquet as pq
        except Exception:
            return None, 'not counted: pyarrow is not importable on the host'
        try:
            return pq.ParquetFile(path).metadata.num_rows, 'parquet footer'
        except Exception as e:
            return None, 'not counted: pyarrow could not read the footer: ' + str(e)[:200]
    return None, 'not counted: rows are counted for .jsonl, .csv and .parquet files'

def data_file(f):
    out = {'field': f['field'], 'path': f['path'], 'size': None, 'mtime': None, 'sha256': None, 'rows': None}
    try:
        st = os.stat(f['path'])
        out['size'], out['mtime'] = st.st_size, iso(st.st_mtime)
        if not os.path.isfile(f['path']):
            return dict(out, hashed='not hashed: not a regular file', rowsFrom='not counted: not a regular file')
        out['sha256'], lines = digest(f['path'], st.st_size)
        out['hashed'] = 'sha256 of the file' if st.st_size <= LIMIT else 'sha256 of the first and last %d MiB and the size in bytes (the file is over %d GiB)' % (EDGE >> 20, LIMIT >> 30)
        out['rows'], out['rowsFrom'] = rows(f['path'], lines)
    except OSError as e:
        out['hashed'] = out['rowsFrom'] = 'cannot read it: ' + str(e)
    return out

def file_sha(path):
    try:
        with open(path, 'rb') as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None

def model(m):
    if 'path' in m:
        return {'spec': m['spec'], 'path': m['path'], 'configSha256': file_sha(os.path.join(m['path'], 'config.json'))}
    cache = os.environ.get('HF_HUB_CACHE') or os.path.join(os.environ.get('HF_HOME') or os.path.expanduser('~/.cache/huggingface'), 'hub')
    ref = os.path.join(cache, 'models--' + m['spec'].replace('/', '--'), 'refs', 'main')
    try:
        with open(ref) as f:
            revision = f.read().strip() or None
    except OSError:
        revision = None
    return {'spec': m['spec'], 'hubId': m['spec'], 'revision': revision}

def git(workdir):
    out = {'workdir': workdir, 'commit': None, 'dirty': None}
    try:
        head = subprocess.run(['git', '-C', workdir, 'rev-parse', 'HEAD'], capture_output=True, text=True, timeout=30)
        if head.returncode != 0:
            return dict(out, note=(head.stderr.strip().splitlines() or ['git rev-parse failed'])[-1][:200])
        status = subprocess.run(['git', '-C', workdir, 'status', '--porcelain'], capture_output=True, text=True, timeout=60)
        return dict(out, commit=head.stdout.strip(), dirty=bool(status.stdout.strip()) if status.returncode == 0 else None)
    except FileNotFoundError:
        return dict(out, note='git is not installed on the host')
    except subprocess.TimeoutExpired:
        return dict(out, note='git did not answer within its time limit')

def environment(check):
    out, argv = io.StringIO(), sys.argv
    try:
        sys.argv = ['env-check'] + check['args']
        with contextlib.redirect_stdout(out):
            exec(compile(check['script'], 'env-check', 'exec'), {'__name__': 'env_check'})
        return json.loads(out.getvalue().strip().splitlines()[-1])
    except Exception as e:
        return {'error': 'the environment check failed: ' + repr(e)[:300]}
    finally:
        sys.argv = argv

print(json.dumps({'environment': environment(inp['envCheck']), 'data': [data_file(f) for f in inp['data']], 'model': model(inp['model']), 'git': git(inp['workdir'])}))
`;

export interface HostFactsInputs {
  workdir: string;
  /** The run's setup lines and variables: its environment is measured as the job will see it. */
  setup: string[];
  env: Record<string, string>;
  data: NeededFile[];
  /** The spec's model, and its folder on the host when it is a path (else it is a hub id). */
  model: { spec: string; path?: string };
}

/**
 * What a run's provenance needs from its host, in one round trip (one Python process): the environment check and the
 * data, model and git facts, after the run's setup lines in its workdir.
 */
export async function collectHostFacts(host: Host, inp: HostFactsInputs): Promise<HostFacts> {
  const args = {
    limit: HASH_LIMIT,
    edge: EDGE,
    workdir: inp.workdir,
    data: inp.data,
    model: inp.model,
    envCheck: environmentCheckProgram(),
  };
  const script = [
    `cd ${shellQuote(inp.workdir)} || exit 3`,
    hostPrelude({ setup: inp.setup, env: inp.env }),
    `python3 - ${shellQuote(JSON.stringify(args))}`,
  ].join('\n');
  // Hashing reads every data file once: minutes for tens of GiB on a slow disk.
  const r = await host.exec(script, { stdin: PROVENANCE_SCRIPT, timeoutMs: 30 * 60_000 });
  const fail = (why: string) => new Error(`${host.name}: cannot record the run's provenance: ${why}`);
  if (r.code !== 0)
    throw fail(`exit code ${r.code}${r.timedOut ? ' (timed out)' : ''}: ${r.stderr.trim().split('\n').slice(-3).join(' ')}`);
  // The last line: the setup lines may print lines of their own before it.
  const line = r.stdout.trim().split('\n').pop() ?? '';
  let facts: Omit<HostFacts, 'environment'> & { environment: unknown };
  try {
    facts = JSON.parse(line) as typeof facts;
  } catch {
    throw fail(`the host's script printed no JSON: ${line.slice(0, 200)}`);
  }
  const env = environmentSchema.safeParse(facts.environment);
  const error = (facts.environment as { error?: unknown }).error;
  const environment = env.success
    ? env.data
    : {
        error:
          typeof error === 'string'
            ? error
            : `the environment check printed something else: ${env.error.issues.map((i) => `${fieldPath(i.path)}: ${i.message}`).join('; ')}`,
      };
  return { ...facts, environment };
}
