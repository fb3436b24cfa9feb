// Bundles the extension host, the `medrl` CLI and one browser bundle per webview with esbuild,
// and writes the JSON schemas generated from the zod schemas. `--production` minifies; `--watch` rebuilds on every change
// (the VS Code task "watch" runs it, and its problem matcher reads the lines the watchReport plugin prints).
import * as esbuild from 'esbuild';
import { readdirSync, existsSync, mkdirSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const common = {
  bundle: true,
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'warning',
  legalComments: 'none',
  // A problem matcher cannot read colored output.
  ...(watch ? { color: false } : {}),
};
// ssh2 loads an optional native crypto binding and cpu-features inside try/catch; the pure-JS paths are used when absent.
const nodeExternal = ['cpu-features', '*.node'];

// A PHI worker thread gets the name lexicon's words from the main thread (scan-range.ts), so compromise, which
// name-lexicon.ts reads them from, stays out of its bundle and out of each worker's memory.
const withoutCompromise = {
  name: 'without-compromise',
  setup(build) {
    build.onResolve({ filter: /^compromise(\/|$)/ }, (args) => ({ path: args.path, namespace: 'without-compromise' }));
    build.onLoad({ filter: /.*/, namespace: 'without-compromise' }, () => ({
      contents: "export default { model() { throw new Error('a PHI worker thread reads no lexicon: the main thread sends its words'); } };",
    }));
  },
};

// The extension and the CLI read one thing of compromise: its lexicon (name-lexicon.ts takes the person names from it).
// Their bundles carry that lexicon, read here from compromise at build time, instead of compromise itself, whose load
// (unpacking its lexicon and building its tagger) took 0.37 s and 30 MB in every process that scanned or masked text.
const require = createRequire(import.meta.url);
const compromiseLexicon = {
  name: 'compromise-lexicon',
  setup(build) {
    build.onResolve({ filter: /^compromise(\/|$)/ }, (args) => ({ path: args.path, namespace: 'compromise-lexicon' }));
    build.onLoad({ filter: /.*/, namespace: 'compromise-lexicon' }, () => {
      const lexicon = JSON.stringify(require('compromise/two').model().one.lexicon);
      return {
        contents: `const lexicon = JSON.parse(${JSON.stringify(lexicon)});\nexport default { model: () => ({ one: { lexicon } }) };`,
      };
    });
  },
};

const webviewDir = join(root, 'webview');
const webviews = existsSync(webviewDir)
  ? readdirSync(webviewDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(webviewDir, d.name, 'main.ts')))
      .map((d) => d.name)
  : [];

// Start from an empty dist/ so nothing stale (old source maps, removed webviews) is packaged.
rmSync(join(root, 'dist'), { recursive: true, force: true });
const started = Date.now();
const builds = [
  {
    ...common,
    entryPoints: { extension: join(root, 'src/vscode/extension.ts') },
    outdir: join(root, 'dist'),
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', ...nodeExternal],
    // Marks when the bundle starts evaluating, so activation can report load time as well as activate() time.
    banner: { js: 'globalThis.__medrlLoadStart = performance.now();' },
    footer: { js: 'globalThis.__medrlLoadEnd = performance.now();' },
    plugins: [compromiseLexicon],
  },
  {
    ...common,
    entryPoints: { cli: join(root, 'src/cli/main.ts') },
    outdir: join(root, 'dist'),
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: nodeExternal,
    banner: { js: '#!/usr/bin/env node' },
    plugins: [compromiseLexicon],
  },
  {
    ...common,
    // The thread that parses a big local log into the metrics cache for the dashboard (cache-fill-workers.ts starts it),
    // and those that parse one range each of a big log `medrl metrics` reads (split-parse.ts starts them).
    entryPoints: {
      'metrics-worker': join(root, 'src/core/metrics/parse-worker.ts'),
      'range-parse-worker': join(root, 'src/core/metrics/range-parse-worker.ts'),
    },
    outdir: join(root, 'dist'),
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: nodeExternal,
  },
  {
    ...common,
    // The threads that write `medrl metrics --json` for a large series (series-json-workers.ts starts them).
    entryPoints: { 'json-worker': join(root, 'src/core/metrics/series-json-worker.ts') },
    outdir: join(root, 'dist'),
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: nodeExternal,
  },
  {
    ...common,
    // The PHI scan's worker thread is its own bundle beside the CLI and the extension (both start it from dist/).
    entryPoints: { 'phi-worker': join(root, 'src/core/phi/scan-worker.ts') },
    outdir: join(root, 'dist'),
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: nodeExternal,
    plugins: [withoutCompromise],
  },
  // All webviews in one ES-module build with code splitting: zod, lit and uPlot land once in shared chunks
  // (dist/webview/chunks/) instead of once per webview, which keeps the .vsix small.
  {
    ...common,
    entryPoints: Object.fromEntries(webviews.map((name) => [name, join(webviewDir, name, 'main.ts')])),
    outdir: join(root, 'dist/webview'),
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    loader: { '.css': 'css' },
  },
];

/** Makes dist/cli.js executable and writes the JSON schemas from the zod schemas (single source of truth) through it. */
function finishCli() {
  chmodSync(join(root, 'dist/cli.js'), 0o755);
  const schemaDir = join(root, 'dist/schemas');
  mkdirSync(schemaDir, { recursive: true });
  const schemas = JSON.parse(execFileSync(process.execPath, [join(root, 'dist/cli.js'), 'schema', '--json'], { encoding: 'utf8' }));
  for (const [name, schema] of Object.entries(schemas)) {
    writeFileSync(join(schemaDir, `${name}.schema.json`), JSON.stringify(schema, null, 2) + '\n');
  }
  return Object.keys(schemas).length;
}

if (watch) {
  // One started/finished pair per round of rebuilds (the three bundles rebuild in parallel): .vscode/tasks.json's background
  // pattern waits for them, so a launch starts once every bundle is written.
  // The first round counts every bundle from the start, so a small bundle done early does not end it.
  let building = builds.length;
  let errors = 0;
  const firstStarted = new Set();
  console.log('[watch] build started');
  const watchReport = (name) => ({
    name: 'watch-report',
    setup(build) {
      build.onStart(() => {
        if (!firstStarted.has(name)) {
          firstStarted.add(name);
          return;
        }
        if (building++ === 0) {
          errors = 0;
          console.log('[watch] build started');
        }
      });
      build.onEnd((result) => {
        errors += result.errors.length;
        if (name === 'cli' && result.errors.length === 0) {
          try {
            finishCli();
          } catch (err) {
            errors++;
            console.error(`[watch] writing the JSON schemas failed: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
        if (--building === 0) console.log(`[watch] build finished with ${errors} error(s)`);
      });
    },
  });
  const names = ['extension', 'cli', 'metrics-worker', 'json-worker', 'phi-worker', 'webviews'];
  const contexts = await Promise.all(
    builds.map((b, i) => esbuild.context({ ...b, plugins: [...(b.plugins ?? []), watchReport(names[i])] })),
  );
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
  const schemaCount = finishCli();
  console.log(
    `[build] ${production ? 'production' : 'development'} bundles (extension, cli, metrics-worker, range-parse-worker, json-worker, phi-worker, ${webviews.length} webview(s)) and ${schemaCount} schema(s) in ${Date.now() - started} ms`,
  );
}
