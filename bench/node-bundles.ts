import { buildSync } from 'esbuild';

/**
 * The folder holding `entries` bundled for Node as the CLI ships (esbuild, one file each), built into `dir`; or, where
 * MEDRL_BENCH_BIN names a folder of them already built, that folder (a machine without the project's node_modules).
 */
export function nodeBundles(entries: Record<string, string>, dir: string): string {
  const given = process.env.MEDRL_BENCH_BIN;
  if (given) return given;
  buildSync({
    entryPoints: entries,
    outdir: dir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['cpu-features', '*.node'],
    logLevel: 'warning',
  });
  return dir;
}
