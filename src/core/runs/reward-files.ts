import { execFile } from 'node:child_process';
import { readFile, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { LocatedError, type Problem } from '../errors/located-error';

/** A reward function's upload: the file and the Python files beside it that it imports, transitively. */
export interface RewardUpload {
  /** Path of the reward file inside the upload folder (its name: the file sits at the folder's top). */
  main: string;
  /** Path inside the upload folder (posix, relative to the reward file's folder) → content. */
  files: Record<string, string>;
  /** Local absolute paths, same keys: what the playground stages on a host. */
  local: Record<string, string>;
}

/**
 * Finds local imports with Python's own parser (ast), so every import form (`import a.b`, `from a import b`,
 * `from . import b`, imports inside functions) is read as Python reads it. A module counts as local when it resolves
 * beside the reward file (its folder is first on sys.path: the worker and the launch script's PYTHONPATH put it there);
 * anything else is taken as installed. Prints {"files": [paths relative to the folder], "problems": [{file, line, message}]}.
 */
const FIND_IMPORTS = String.raw`
import ast, json, os, sys
root, main = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
base = os.path.dirname(main)
files, problems, queue = [], [], [main]

def rel(path):
    return os.path.relpath(path, base).replace(os.sep, "/")

def inside(path, folder):
    return os.path.commonpath([path, folder]) == folder

def add(path, origin, line):
    real = os.path.realpath(path)
    if not inside(real, root):
        problems.append({"file": origin, "line": line, "message": f"imports {rel(path)}, which is a link to {real}, outside the workspace: copy the module beside the reward file instead"})
    elif path not in files and path != main:
        files.append(path)
        queue.append(path)

def chain(parts, origin, line):
    """Adds the files of module base/parts[0]/.../parts[-1] and its packages; False when the first part is not local."""
    folder = base
    for i, part in enumerate(parts):
        target = os.path.join(folder, part)
        if os.path.isfile(target + ".py"):
            add(target + ".py", origin, line)
            return True
        if not os.path.isdir(target):
            return i > 0
        if os.path.isfile(os.path.join(target, "__init__.py")):
            add(os.path.join(target, "__init__.py"), origin, line)
        folder = target
    return True

while queue:
    path = queue.pop(0)
    origin = rel(path)
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read(), filename=origin)
    except SyntaxError as error:
        problems.append({"file": origin, "line": error.lineno, "message": f"Python syntax error: {error.msg}"})
        continue
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                chain(alias.name.split("."), origin, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            module = node.module.split(".") if node.module else []
            if node.level:
                package = os.path.dirname(path)
                for _ in range(node.level - 1):
                    package = os.path.dirname(package)
                if path == main or package == base or not inside(package, base):
                    where = "the reward file is loaded as a top-level module" if path == main else "it climbs out of the reward file's folder"
                    problems.append({"file": origin, "line": node.lineno, "message": f"relative import {'.' * node.level}{node.module or ''} cannot work ({where}): import the module by its name from the reward file's folder"})
                    continue
                module = rel(package).split("/") + module
            if module and not chain(module, origin, node.lineno):
                continue
            for alias in node.names:
                if alias.name != "*":
                    target = os.path.join(base, *module, alias.name)
                    if os.path.isfile(target + ".py"):
                        add(target + ".py", origin, node.lineno)
                    elif os.path.isfile(os.path.join(target, "__init__.py")):
                        add(os.path.join(target, "__init__.py"), origin, node.lineno)
print(json.dumps({"files": [rel(f) for f in files], "problems": problems}))
`;

function runPython(args: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile('python3', ['-c', FIND_IMPORTS, ...args], { timeout: 20_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) {
        const why =
          (err as NodeJS.ErrnoException).code === 'ENOENT'
            ? 'python3 is not installed on this machine'
            : `${err.message}${stderr ? `: ${stderr.trim()}` : ''}`;
        reject(new Error(`cannot read the reward file's imports (${why})`));
      } else resolvePromise(stdout);
    });
  });
}

/**
 * The reward file at `rewardPath` (relative to the workspace) and its local imports, read for upload into the run's
 * reward/ folder with their layout kept. Refuses a path outside the workspace and an import that leaves it or cannot
 * work, with the spec's field or the Python file and line.
 */
export async function rewardUpload(
  workspaceRoot: string,
  rewardPath: string,
  specFile: string,
  field: 'reward.path' | 'rollout.agentLoop.path' = 'reward.path',
): Promise<RewardUpload> {
  const what = field === 'reward.path' ? 'the reward function' : 'the agent loop';
  const fail = (message: string, problems: Problem[] = [{ file: specFile, field, severity: 'error', message }]) => {
    throw new LocatedError(`cannot upload ${what}`, problems);
  };
  const outside = (from: string, to: string) => {
    const r = relative(from, to);
    return r === '' || r === '..' || r.startsWith(`..${sep}`) || isAbsolute(r);
  };
  const refuse = () =>
    fail(
      `${rewardPath} is outside the workspace (${workspaceRoot}): only the workspace's files are uploaded with a run; copy ${what} into it`,
    );
  const local = resolve(workspaceRoot, rewardPath);
  if (outside(resolve(workspaceRoot), local)) refuse();
  const real = await realpath(local).catch((err: NodeJS.ErrnoException) =>
    fail(err.code === 'ENOENT' ? `${local} does not exist` : String(err)),
  );
  const root = await realpath(workspaceRoot);
  if (outside(root, real)) refuse();
  if (!real.endsWith('.py')) fail(`${rewardPath} is not a Python file (.py)`);
  const found = JSON.parse(await runPython([root, real])) as {
    files: string[];
    problems: Array<{ file: string; line?: number; message: string }>;
  };
  const folder = dirname(real);
  if (found.problems.length) {
    fail(
      '',
      found.problems.map((p) => ({
        file: join(dirname(local), p.file),
        ...(p.line ? { line: p.line } : {}),
        severity: 'error' as const,
        message: p.message,
      })),
    );
  }
  const main = real.slice(folder.length + 1);
  const upload: RewardUpload = { main, files: {}, local: {} };
  for (const name of [main, ...found.files]) {
    const path = join(folder, ...name.split('/'));
    upload.local[name] = path;
    upload.files[name] = await readFile(path, 'utf8');
  }
  return upload;
}
