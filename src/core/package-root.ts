import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The folder of the medrl-studio package (where demo/ and configs/ ship), found upwards from a module's folder. */
export function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'medrl-studio') return dir;
      } catch {
        // not ours: keep looking upwards
      }
    }
    if (dirname(dir) === dir) throw new Error(`cannot find the medrl-studio package above ${from}`);
  }
}
