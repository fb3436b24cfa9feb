import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import SSHConfig from 'ssh-config';

/** Where the OpenSSH client files are; injectable so tests and the E2E use a temp HOME. */
export interface SshPaths {
  home: string;
  sshConfigPath: string;
  knownHostsPath: string;
  /** GlobalKnownHostsFile when ~/.ssh/config sets none; default OpenSSH's (ssh_config(5), OpenSSH 9.x). */
  globalKnownHostsPaths?: string[];
}

const GLOBAL_KNOWN_HOSTS = ['/etc/ssh/ssh_known_hosts', '/etc/ssh/ssh_known_hosts2'];

export function defaultSshPaths(home: string = homedir()): SshPaths {
  return { home, sshConfigPath: join(home, '.ssh/config'), knownHostsPath: join(home, '.ssh/known_hosts') };
}

/** One machine to open an SSH connection to, after ~/.ssh/config was applied. */
export interface SshEndpoint {
  /** The name the user wrote (an alias, or `user@host:port` in a ProxyJump list). */
  alias: string;
  hostName: string;
  port: number;
  user: string;
  identityFiles: string[];
  /** True when IdentityFile was set (then only those keys are tried, like IdentitiesOnly for files). */
  explicitIdentityFiles: boolean;
  /** Agent socket from IdentityAgent (`none` turns the agent off); undefined means SSH_AUTH_SOCK. */
  identityAgent?: string | 'none';
  /** Extra known_hosts files from UserKnownHostsFile. */
  knownHostsFiles: string[];
  /** The system's known_hosts (GlobalKnownHostsFile): read when verifying, never written. */
  globalKnownHostsFiles: string[];
  /** HashKnownHosts yes: new known_hosts lines hide the host name. */
  hashKnownHosts: boolean;
  connectTimeoutMs?: number;
  serverAliveIntervalMs?: number;
  serverAliveCountMax?: number;
}

/** The target and the jump hosts in front of it, first hop first. */
export interface SshRoute {
  jumps: SshEndpoint[];
  target: SshEndpoint;
}

/** The config text with every Include spliced in where it stands (ssh-config does not follow Include). */
function expandIncludes(file: string, paths: SshPaths, depth: number): string {
  if (depth > 16) throw new Error(`${file}: Include nested more than 16 levels deep`);
  const text = readFileSync(file, 'utf8');
  return text
    .split(/\r?\n/)
    .map((line) => {
      const m = /^\s*include(?:\s+|\s*=\s*)(.+)$/i.exec(line);
      if (!m?.[1]) return line;
      const files = splitWords(m[1]).flatMap((pattern) => globFiles(expandTilde(pattern, paths.home), dirname(paths.sshConfigPath)));
      return files.map((f) => expandIncludes(f, paths, depth + 1)).join('\n');
    })
    .join('\n');
}

function splitWords(value: string): string[] {
  return [...value.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

/** Files matching a glob (`*` and `?` in the last part), relative paths under ~/.ssh like OpenSSH, sorted. */
function globFiles(pattern: string, base: string): string[] {
  const abs = isAbsolute(pattern) ? pattern : join(base, pattern);
  const name = basename(abs);
  if (!/[*?]/.test(name)) return existsSync(abs) ? [abs] : [];
  const dir = dirname(abs);
  if (!existsSync(dir)) return [];
  const re = new RegExp(
    `^${name
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return readdirSync(dir)
    .filter((n) => re.test(n))
    .sort()
    .map((n) => join(dir, n));
}

function expandTilde(path: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return path;
}

/** The user's ~/.ssh/config (with its Includes), or an empty one when it does not exist. */
function loadSshConfig(paths: SshPaths): SSHConfig {
  if (!existsSync(paths.sshConfigPath)) return SSHConfig.parse('');
  return SSHConfig.parse(expandIncludes(paths.sshConfigPath, paths, 0));
}

/** Host aliases a user can pick (Host entries without wildcards or negations), in file order. */
export function listSshAliases(paths: SshPaths): string[] {
  const out: string[] = [];
  for (const line of loadSshConfig(paths)) {
    if (line.type !== SSHConfig.DIRECTIVE || line.param.toLowerCase() !== 'host') continue;
    const values = typeof line.value === 'string' ? [line.value] : line.value.map((v) => v.val);
    for (const v of values) if (!/[*?!]/.test(v) && !out.includes(v)) out.push(v);
  }
  return out;
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function all(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** `%h`, `%p`, `%r`, `%u`, `%d`, `%%` in IdentityFile / IdentityAgent / UserKnownHostsFile, as OpenSSH expands them. */
function expandTokens(value: string, ep: { hostName: string; port: number; user: string; alias: string }, paths: SshPaths): string {
  const localUser = process.env.USER ?? 'root';
  return expandTilde(
    value.replace(/%([%hprudn])/g, (_, t: string) =>
      t === '%'
        ? '%'
        : t === 'h'
          ? ep.hostName
          : t === 'p'
            ? String(ep.port)
            : t === 'r'
              ? ep.user
              : t === 'u'
                ? localUser
                : t === 'd'
                  ? paths.home
                  : ep.alias,
    ),
    paths.home,
  );
}

/** IdentityAgent: `none`, `SSH_AUTH_SOCK` (the default), `$VAR` (an environment variable) or a socket path. */
function identityAgent(
  value: string | undefined,
  ep: { hostName: string; port: number; user: string; alias: string },
  paths: SshPaths,
): string | undefined {
  if (value === undefined || value === 'SSH_AUTH_SOCK') return undefined;
  if (value.toLowerCase() === 'none') return 'none';
  if (value.startsWith('$')) return process.env[value.slice(1)] || 'none';
  return expandTokens(value, ep, paths);
}

/** `user@host:port` (ProxyJump syntax) split; any part may be missing. */
function parseJumpSpec(spec: string): { user?: string; host: string; port?: number } {
  const m = /^(?:([^@]+)@)?(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(spec.trim());
  if (!m?.[2]) throw new Error(`ProxyJump entry "${spec}" is not [user@]host[:port]`);
  return { user: m[1], host: m[2].replace(/^\[|\]$/g, ''), port: m[3] ? Number(m[3]) : undefined };
}

function resolveEndpoint(
  config: SSHConfig,
  alias: string,
  paths: SshPaths,
  override: { user?: string; port?: number } = {},
): SshEndpoint & { proxyJump?: string; proxyCommand?: string } {
  const c = config.compute(alias, { ignoreCase: true, matchExec: false });
  const hostName = (first(c.hostname) ?? alias).replace(/%h/g, alias);
  const port = override.port ?? Number(first(c.port) ?? 22);
  if (!Number.isInteger(port) || port <= 0 || port > 65535)
    throw new Error(`${paths.sshConfigPath}: Port of "${alias}" is not a port number: ${first(c.port)}`);
  const user = override.user ?? first(c.user) ?? process.env.USER ?? 'root';
  const ep = { alias, hostName, port, user };
  const files = all(c.identityfile).map((f) => expandTokens(f, ep, paths));
  const defaults = ['id_ed25519', 'id_ecdsa', 'id_rsa'].map((n) => join(paths.home, '.ssh', n));
  const agent = first(c.identityagent);
  const seconds = (v: string | string[] | undefined) => (first(v) === undefined ? undefined : Number(first(v)) * 1000);
  return {
    ...ep,
    identityFiles: files.length ? files : defaults.filter((f) => existsSync(f)),
    explicitIdentityFiles: files.length > 0,
    identityAgent: identityAgent(agent, ep, paths),
    knownHostsFiles: all(c.userknownhostsfile)
      .flatMap((v) => splitWords(v))
      .map((f) => expandTokens(f, ep, paths)),
    globalKnownHostsFiles:
      c.globalknownhostsfile === undefined
        ? (paths.globalKnownHostsPaths ?? GLOBAL_KNOWN_HOSTS)
        : all(c.globalknownhostsfile)
            .flatMap((v) => splitWords(v))
            .map((f) => expandTokens(f, ep, paths)),
    hashKnownHosts: first(c.hashknownhosts)?.toLowerCase() === 'yes',
    connectTimeoutMs: seconds(c.connecttimeout),
    serverAliveIntervalMs: seconds(c.serveraliveinterval),
    serverAliveCountMax: first(c.serveralivecountmax) === undefined ? undefined : Number(first(c.serveralivecountmax)),
    proxyJump: first(c.proxyjump),
    proxyCommand: first(c.proxycommand),
  };
}

/**
 * How to reach an alias: its settings from ~/.ssh/config and the jump hosts (ProxyJump, several hops, each resolved
 * through the config too, a hop's own ProxyJump first), like `ssh ALIAS` does.
 */
export function resolveSshRoute(alias: string, paths: SshPaths): SshRoute {
  const config = loadSshConfig(paths);
  const seen = new Set<string>();
  const route = (name: string, override: { user?: string; port?: number }, depth: number): SshEndpoint[] => {
    if (depth > 8 || seen.has(`${name}:${override.port ?? ''}`))
      throw new Error(`${paths.sshConfigPath}: ProxyJump of "${alias}" loops or is deeper than 8 hops`);
    seen.add(`${name}:${override.port ?? ''}`);
    const { proxyJump, proxyCommand, ...ep } = resolveEndpoint(config, name, paths, override);
    if (proxyCommand && proxyCommand.toLowerCase() !== 'none' && (!proxyJump || proxyJump.toLowerCase() === 'none')) {
      throw new Error(`${paths.sshConfigPath}: "${name}" uses ProxyCommand, which MedRL Studio does not run; use ProxyJump instead`);
    }
    if (!proxyJump || proxyJump.toLowerCase() === 'none') return [ep];
    const hops = proxyJump.split(',').map(parseJumpSpec);
    const [head, ...rest] = hops;
    const chain = route(head!.host, { user: head!.user, port: head!.port }, depth + 1);
    for (const hop of rest) {
      const {
        proxyJump: _ignored,
        proxyCommand: _none,
        ...h
      } = resolveEndpoint(config, hop.host, paths, { user: hop.user, port: hop.port });
      chain.push(h);
    }
    chain.push(ep);
    return chain;
  };
  const chain = route(alias, {}, 0);
  return { jumps: chain.slice(0, -1), target: chain[chain.length - 1]! };
}
