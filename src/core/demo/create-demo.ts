import { cp, mkdir, readdir, stat, writeFile, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseDocument } from 'yaml';
import { shellQuote } from '../remote/shell-quote';

/**
 * Marks a folder made by createDemo, so a later call may refresh it but never overwrites a user's folder; the extension
 * opens its walkthrough in a folder that has it.
 */
export const DEMO_MARKER = '.medrl-demo';

interface DemoResult {
  dir: string;
  files: string[];
  refreshed: boolean;
}

/**
 * Writes the demo workspace into `dir`: medrl.yaml (local host only), the real medical dataset samples with their
 * provenance and licences, reward functions, and the example run specs from the package's configs/.
 */
export async function createDemo(packageRootDir: string, dir: string): Promise<DemoResult> {
  const refreshed = existsSync(join(dir, DEMO_MARKER));
  if (!refreshed && existsSync(dir) && (await readdir(dir)).length > 0) {
    throw new Error(`${dir} is not empty and was not made by "medrl demo": choose an empty or new folder`);
  }
  await mkdir(dir, { recursive: true });
  await cp(join(packageRootDir, 'demo'), dir, { recursive: true, force: true });
  await cp(join(packageRootDir, 'configs'), join(dir, 'configs'), { recursive: true, force: true });
  await useStandins(join(dir, 'medrl.yaml'), join(packageRootDir, 'standins'));
  const version = (JSON.parse(await readFile(join(packageRootDir, 'package.json'), 'utf8')) as { version: string }).version;
  await writeFile(join(dir, DEMO_MARKER), `made by medrl-studio ${version}\n`);
  return { dir, files: await listFiles(dir, dir), refreshed };
}

/**
 * The demo's `local` host finds the stand-in trainers (verl, TRL, accelerate, ray) of this installation: its setup puts
 * the package's standins/ first on PATH and PYTHONPATH. medrl.yaml's comments are kept.
 */
async function useStandins(configFile: string, standins: string): Promise<void> {
  const doc = parseDocument(await readFile(configFile, 'utf8'));
  const local = (doc.getIn(['hosts', 'local']) as { toJSON?: () => object } | undefined)?.toJSON?.() ?? {};
  const setup = [
    `export PATH=${shellQuote(join(standins, 'bin'))}:"$PATH"`,
    `export PYTHONPATH=${shellQuote(standins)}\${PYTHONPATH:+:$PYTHONPATH}`,
  ];
  doc.setIn(['hosts', 'local'], doc.createNode({ ...local, setup }));
  await writeFile(configFile, doc.toString());
}

async function listFiles(root: string, dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const p = join(dir, name);
    if ((await stat(p)).isDirectory()) out.push(...(await listFiles(root, p)));
    else out.push(relative(root, p));
  }
  return out;
}
