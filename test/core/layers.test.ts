import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

// The core's folders form layers: a folder may use another only if that one never uses it back, however indirectly.
// And only src/vscode may use VS Code, so the core, the CLI, the protocol and the webview run without it.

const root = process.env.MEDRL_ROOT ?? process.cwd();

interface Import {
  file: string;
  line: number;
  specifier: string;
}

function sourceFiles(dir: string): string[] {
  let out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names.sort()) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(sourceFiles(p));
    else if (/\.(ts|tsx|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every module specifier a file names: static imports and re-exports, `import(...)` and `require(...)`. */
function importsOf(file: string): Import[] {
  const out: Import[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s+|\bimport\(\s*|\brequire\(\s*)(['"])([^'"]+)\1/g)) {
        out.push({ file: relative(root, file), line: i + 1, specifier: m[2]! });
      }
    });
  return out;
}

/** The first folder under src/core a path is in (a file right in src/core is its own node). */
function coreFolder(path: string): string {
  return relative(join(root, 'src/core'), path).split('/')[0]!.replace(/\.ts$/, '');
}

/** Edges between core folders, each with the import lines that make it. */
function coreFolderGraph(imports: Import[]): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const imp of imports) {
    if (!imp.specifier.startsWith('.')) continue;
    const from = join(root, imp.file);
    const target = normalize(join(dirname(from), imp.specifier));
    if (relative(join(root, 'src/core'), target).startsWith('..')) continue;
    const a = coreFolder(from);
    const b = coreFolder(target);
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Map());
    const edges = graph.get(a)!;
    if (!edges.has(b)) edges.set(b, []);
    edges.get(b)!.push(`${imp.file}:${imp.line} imports '${imp.specifier}'`);
  }
  return graph;
}

/** Strongly connected components with more than one folder (Tarjan). */
function folderCycles(graph: Map<string, Map<string, string[]>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) cycles.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

function describeCycle(graph: Map<string, Map<string, string[]>>, folders: string[]): string {
  const lines = [`folders ${folders.join(', ')} use each other:`];
  for (const a of folders)
    for (const [b, at] of graph.get(a) ?? []) if (folders.includes(b)) lines.push(`  ${a} -> ${b}`, ...at.map((x) => `    ${x}`));
  return lines.join('\n');
}

describe('layers', () => {
  it('no loop between the folders of src/core', () => {
    const graph = coreFolderGraph(sourceFiles(join(root, 'src/core')).flatMap(importsOf));
    const cycles = folderCycles(graph);
    assert.deepEqual(cycles, [], cycles.map((c) => describeCycle(graph, c)).join('\n'));
  });

  it('finds a loop through three folders', () => {
    const imp = (file: string, specifier: string): Import => ({ file, line: 1, specifier });
    const graph = coreFolderGraph([
      imp('src/core/a/x.ts', '../b/y'),
      imp('src/core/b/y.ts', '../c/z'),
      imp('src/core/c/z.ts', '../a/x'),
      imp('src/core/c/z.ts', '../d/w'),
    ]);
    assert.deepEqual(folderCycles(graph), [['a', 'b', 'c']]);
  });

  it('only src/vscode uses VS Code', () => {
    const vscodeDir = join(root, 'src/vscode');
    const bad = ['src/core', 'src/cli', 'src/protocol', 'webview']
      .flatMap((d) => sourceFiles(join(root, d)))
      .flatMap(importsOf)
      .filter((imp) => {
        if (imp.specifier === 'vscode' || imp.specifier.startsWith('vscode/')) return true;
        if (!imp.specifier.startsWith('.')) return false;
        const target = normalize(join(dirname(join(root, imp.file)), imp.specifier));
        return !relative(vscodeDir, target).startsWith('..');
      })
      .map((imp) => `${imp.file}:${imp.line} imports '${imp.specifier}'`);
    assert.deepEqual(bad, [], `only src/vscode may import vscode or src/vscode:\n${bad.join('\n')}`);
  });
});
