import { randomBytes } from 'node:crypto';

/** A run id safe as a file name on any host: the name's letters and digits, then UTC time and a random suffix. */
export function makeRunId(name: string, now: Date = new Date(), random: string = randomBytes(3).toString('hex')): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '')
    .replace('T', '-');
  return `${slug || 'run'}-${stamp}-${random}`;
}

/** Run ids this product makes: anything else under a runs folder is not a run. */
export const RUN_ID_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
