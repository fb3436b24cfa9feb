// Bundles the extension host, the `medrl` CLI and one browser bundle per webview with esbuild,
// and writes the JSON schemas generated from the zod schemas. `--production` minifies.
import * as esbuild from 'esbuild';
import { readdirSync, existsSync, mkdirSync, writeFileSync, chmodSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const production = process.argv.includes('--production');
const common = {
  bundle: true,
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'warning',
  legalComments: 'none',
};
// ssh2 loads an optional native crypto binding and cpu-features inside try/catch; the pure-JS paths are used when absent.
const nodeExternal = ['cpu-features', '*.node'];

const webviewDir = join(root, 'webview');
const webviews = existsSync(webviewDir)
  ? readdirSync(webviewDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(webviewDir, d.name, 'main.ts')))
      .map((d) => d.name)
  : [];

// Start from an empty dist/ so nothing stale (old source maps, removed webviews) is packaged.
rmSync(join(root, 'dist'), { recursive: true, force: true });
const started = Date.now();
await Promise.all([
  esbuild.build({
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
  }),
  esbuild.build({
    ...common,
    entryPoints: { cli: join(root, 'src/cli/main.ts') },
    outdir: join(root, 'dist'),
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: nodeExternal,
    banner: { js: '#!/usr/bin/env node' },
  }),
  // All webviews in one ES-module build with code splitting: zod, lit and uPlot land once in shared chunks
  // (dist/webview/chunks/) instead of once per webview, which keeps the .vsix small.
  esbuild.build({
    ...common,
    entryPoints: Object.fromEntries(webviews.map((name) => [name, join(webviewDir, name, 'main.ts')])),
    outdir: join(root, 'dist/webview'),
    chunkNames: 'chunks/[name]-[hash]',
    splitting: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    loader: { '.css': 'css' },
  }),
]);
chmodSync(join(root, 'dist/cli.js'), 0o755);

// JSON schemas come from the zod schemas (single source of truth) through the CLI just built.
const schemaDir = join(root, 'dist/schemas');
mkdirSync(schemaDir, { recursive: true });
const schemas = JSON.parse(execFileSync(process.execPath, [join(root, 'dist/cli.js'), 'schema', '--json'], { encoding: 'utf8' }));
for (const [name, schema] of Object.entries(schemas)) {
  writeFileSync(join(schemaDir, `${name}.schema.json`), JSON.stringify(schema, null, 2) + '\n');
}
console.log(`[build] ${production ? 'production' : 'development'} bundles (extension, cli, ${webviews.length} webview(s)) and ${Object.keys(schemas).length} schema(s) in ${Date.now() - started} ms`);
