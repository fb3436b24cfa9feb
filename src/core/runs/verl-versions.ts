import verlKeys from './verl-config-keys.json';
import { versionAtLeast } from './trainer';

/**
 * The verl releases MedRL Studio knows, each with the keys Hydra accepts in its ppo_trainer.yaml (composed by verl's own
 * Hydra in the tests: test/integration/runs/verl-code.test.ts keeps verl-config-keys.json equal to what it composes).
 * A host's verl picks the newest known release at or below it: 0.6.3 → 0.6.1's rules, 0.11 → main's. Anything below
 * 0.4 is read as the DiagAgent fork (0.2.0.dev), the only verl of that age a seed installs.
 */
export interface VerlRelease {
  /** The folder under shared/verl/versions it was composed from ("v0.6.1", "main", "diagagent-fork"). */
  source: string;
  /** Its verl/version/version ("0.10.0.dev" for main). */
  version: string;
  fork: boolean;
  index: number;
}

const RELEASES: VerlRelease[] = verlKeys.releases.map((r, index) => ({ ...r, fork: r.source === 'diagagent-fork', index }));
const KEYS = verlKeys.keys as Record<string, number>;

function releaseNumbers(v: string): number[] {
  return (/^v?(\d+(?:\.\d+)*)/.exec(v.trim())?.[1] ?? '0').split('.').map(Number);
}

/**
 * The known release whose rules apply to a host's verl version, by release numbers alone: a source install of a tag
 * reports its dev version (the v0.7.0 tag says 0.7.0.dev) and has that tag's config.
 */
export function verlRelease(version: string): VerlRelease {
  const v = releaseNumbers(version).join('.');
  const found = [...RELEASES].reverse().find((r) => !r.fork && versionAtLeast(v, releaseNumbers(r.version)));
  return found ?? RELEASES.find((r) => r.fork)!;
}

/** What Hydra says of a key on a release: accepted, or the first known release that has it (undefined: none). */
export function keyOnRelease(key: string, release: VerlRelease): { known: true } | { known: false; since?: VerlRelease } {
  const mask = lookup(key);
  if (mask !== undefined && mask & (1 << release.index)) return { known: true };
  const since = mask === undefined ? undefined : RELEASES.filter((r) => !r.fork).find((r) => mask & (1 << r.index));
  return { known: false, since };
}

/**
 * A key's mask; a key below a node Hydra keeps open (a dict-valued default such as `engine_kwargs.vllm` or a `null`
 * node such as `custom_cls`) is judged by that node: Hydra takes any sub-key there.
 */
function lookup(key: string): number | undefined {
  if (KEYS[key] !== undefined) return KEYS[key];
  const parts = key.split('.');
  for (let i = parts.length - 1; i > 0; i--) {
    const parent = parts.slice(0, i).join('.');
    const mask = KEYS[parent];
    if (mask === undefined) continue;
    // A known leaf with no known children is an open value (null or a dict with no schema): Hydra accepts beneath it.
    const hasChildren = Object.keys(KEYS).some((k) => k.startsWith(`${parent}.`));
    return hasChildren ? undefined : mask;
  }
  return undefined;
}

/** The release names as the table and messages print them: "0.6.1", "main (0.10.0.dev)", "the DiagAgent fork (0.2.0.dev)". */
export function releaseName(r: VerlRelease): string {
  if (r.fork) return `the DiagAgent fork (verl ${r.version})`;
  if (r.source === 'main') return `main (${r.version})`;
  return r.version;
}

export const KNOWN_VERL_RELEASES = RELEASES;
