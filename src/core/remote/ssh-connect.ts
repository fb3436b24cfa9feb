import { existsSync, readFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import type * as Ssh2 from 'ssh2';
import type { Client, ClientChannel, AnyAuthMethod, AuthenticationType, ParsedKey } from 'ssh2';
import { answerWithin } from './answer-within';
import type { AuthPrompter, SecretStore } from './auth-prompter';
import { hostKeyFromBlob, HostKeyError, knownHostKeyTypes, verifyHostKey } from './known-hosts';
import type { SshEndpoint, SshPaths, SshRoute } from './ssh-config';

/**
 * ssh2, loaded on the first SSH connection rather than with the extension: evaluating it took a third of the bundle's load
 * time, and a workspace with only the local host never needs it.
 */
let ssh2: typeof Ssh2 | undefined;
function loadSsh2(): typeof Ssh2 {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily, as said above
  return (ssh2 ??= require('ssh2') as typeof Ssh2);
}

/** What every SSH connection of a window (or a CLI run) shares: where the OpenSSH files are, how to ask, what was answered. */
export interface SshContext {
  paths: SshPaths;
  prompter: AuthPrompter;
  /** Where secrets go when the user asks to remember them (VS Code SecretStorage); the CLI has none. */
  secrets?: SecretStore;
  /** Passphrases and passwords entered in this session, in memory only: each is asked once per session. */
  session: Map<string, string>;
  /** ssh-agent socket; default SSH_AUTH_SOCK. IdentityAgent in ~/.ssh/config wins. */
  agentSocket?: string;
  /**
   * Bound on each wait for a host while connecting (TCP, SSH banner, key exchange, each authentication step, a jump
   * host's channel); default ConnectTimeout from the config, else 15 s. Time spent answering a prompt is not counted.
   */
  connectTimeoutMs?: number;
  /** Bound on the server's answer to a channel request (exec, SFTP, forward); default 30 s. */
  requestTimeoutMs?: number;
  keepaliveIntervalMs?: number;
}

export function createSshContext(paths: SshPaths, prompter: AuthPrompter, secrets?: SecretStore): SshContext {
  return { paths, prompter, secrets, session: new Map() };
}

type ConnectFailure = 'unreachable' | 'auth' | 'host-key';

/** Why a connection could not be made, in words a user can act on. */
export class SshConnectError extends Error {
  constructor(
    message: string,
    readonly reason: ConnectFailure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SshConnectError';
  }
}

const HOST_KEY_ALGORITHMS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
] as const;
type HostKeyAlgorithm = (typeof HOST_KEY_ALGORITHMS)[number];

/** Host key algorithms, those known_hosts already holds for the host first (as OpenSSH orders them). */
function hostKeyOrder(known: string[]): HostKeyAlgorithm[] {
  const isKnown = (a: string) => known.some((k) => k === a || (k === 'ssh-rsa' && a.startsWith('rsa-sha2-')));
  return [...HOST_KEY_ALGORITHMS.filter(isKnown), ...HOST_KEY_ALGORITHMS.filter((a) => !isKnown(a))];
}

function seconds(ms: number): number {
  return Math.round(ms / 1000);
}

/** The bound on each wait for a host while connecting: SshContext.connectTimeoutMs, else ConnectTimeout, else 15 s. */
function connectTimeout(ep: SshEndpoint, ctx: SshContext): number {
  return ctx.connectTimeoutMs ?? ep.connectTimeoutMs ?? 15_000;
}

function label(ep: SshEndpoint): string {
  return ep.alias === ep.hostName && ep.port === 22 ? ep.alias : `${ep.alias} (${ep.user}@${ep.hostName}:${ep.port})`;
}

function networkReason(err: NodeJS.ErrnoException, ep: SshEndpoint): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return `connection refused by ${ep.hostName}:${ep.port} (no SSH server listening there?)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host name "${ep.hostName}" not found (check HostName in ~/.ssh/config)`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to ${ep.hostName} (network down or VPN needed?)`;
    case 'ECONNRESET':
      return `connection reset by ${ep.hostName}:${ep.port}`;
    case 'ETIMEDOUT':
      return `connection to ${ep.hostName}:${ep.port} timed out`;
    default:
      return err.message;
  }
}

/** The authentication steps for one endpoint, tried in OpenSSH's order: agent, key files, keyboard-interactive, password. */
function authSteps(
  ep: SshEndpoint,
  ctx: SshContext,
  hostLabel: string,
  timing: { pause(): void; wait(stage: 'auth'): void },
): { next(methodsLeft: AuthenticationType[]): Promise<AnyAuthMethod | false>; tried: string[] } {
  const tried: string[] = [];
  const username = ep.user;
  const agent = ep.identityAgent === 'none' ? undefined : (ep.identityAgent ?? ctx.agentSocket ?? process.env.SSH_AUTH_SOCK);
  type Step = (left: AuthenticationType[]) => Promise<AnyAuthMethod | undefined>;
  const steps: Step[] = [];
  if (agent && existsSync(agent)) {
    steps.push(async (left) => (left.includes('publickey') ? (tried.push('ssh-agent'), { type: 'agent', username, agent }) : undefined));
  }
  for (const file of ep.identityFiles) {
    steps.push(async (left) => {
      if (!left.includes('publickey') || !existsSync(file)) return undefined;
      const key = await loadKey(file, ctx, hostLabel);
      if (!key) return undefined;
      tried.push(file);
      return { type: 'publickey', username, key };
    });
  }
  steps.push(async (left) => {
    if (!left.includes('keyboard-interactive')) return undefined;
    tried.push('keyboard-interactive');
    return {
      type: 'keyboard-interactive',
      username,
      prompt: (name, instructions, _lang, prompts, finish) => {
        if (prompts.length === 0) return finish([]);
        timing.pause();
        const answer = (values: string[]) => {
          timing.wait('auth');
          finish(values);
        };
        ctx.prompter
          .keyboardInteractive({
            host: hostLabel,
            user: username,
            name,
            instructions,
            prompts: prompts.map((p) => ({ prompt: p.prompt, echo: p.echo ?? false })),
          })
          .then(
            (a) => answer(a?.value ?? []),
            () => answer([]),
          );
      },
    };
  });
  const passwordKey = `password:${username}@${ep.hostName}:${ep.port}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    steps.push(async (left) => {
      if (!left.includes('password')) return undefined;
      if (attempt > 0) {
        // The previous password was refused: forget it wherever it was kept.
        ctx.session.delete(passwordKey);
        await ctx.secrets?.delete(`medrl.ssh.${passwordKey}`);
      }
      const password = ctx.session.get(passwordKey) ?? (await ctx.secrets?.get(`medrl.ssh.${passwordKey}`)) ?? (await askPassword());
      if (password === undefined) return undefined;
      ctx.session.set(passwordKey, password);
      tried.push('password');
      return { type: 'password', username, password };
      async function askPassword(): Promise<string | undefined> {
        const a = await ctx.prompter.password({ host: hostLabel, user: username, retry: attempt > 0 });
        if (a?.remember) await ctx.secrets?.store(`medrl.ssh.${passwordKey}`, a.value);
        return a?.value;
      }
    });
  }
  return {
    tried,
    async next(left) {
      while (steps.length) {
        const m = await steps.shift()!(left);
        if (m) return m;
      }
      return false;
    },
  };
}

/** A private key file, decrypted with a passphrase asked once per session (or taken from SecretStorage if remembered). */
async function loadKey(file: string, ctx: SshContext, hostLabel: string): Promise<ParsedKey | undefined> {
  const data = readFileSync(file);
  const parse = (passphrase?: string) => {
    const k = loadSsh2().utils.parseKey(data, passphrase);
    return Array.isArray(k) ? (k[0] as ParsedKey | Error) : k;
  };
  const plain = parse();
  if (!(plain instanceof Error)) return plain;
  if (!/encrypted|passphrase/i.test(plain.message)) throw new Error(`${file}: not a private key ssh2 can read: ${plain.message}`);
  const sessionKey = `passphrase:${file}`;
  const known = ctx.session.get(sessionKey) ?? (await ctx.secrets?.get(`medrl.ssh.${sessionKey}`));
  if (known !== undefined) {
    const k = parse(known);
    if (!(k instanceof Error)) {
      ctx.session.set(sessionKey, known);
      return k;
    }
    ctx.session.delete(sessionKey);
    await ctx.secrets?.delete(`medrl.ssh.${sessionKey}`);
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    const answer = await ctx.prompter.passphrase({ host: hostLabel, keyFile: file, retry: attempt > 0 });
    if (!answer) return undefined;
    const k = parse(answer.value);
    if (k instanceof Error) continue;
    ctx.session.set(sessionKey, answer.value);
    if (answer.remember) await ctx.secrets?.store(`medrl.ssh.${sessionKey}`, answer.value);
    return k;
  }
  throw new SshConnectError(`${hostLabel}: wrong passphrase for ${file} (3 tries)`, 'auth');
}

/** Opens one authenticated SSH connection to an endpoint, directly or through `sock` (a channel of the previous hop). */
function connectEndpoint(ep: SshEndpoint, ctx: SshContext, sock?: Duplex): Promise<Client> {
  const userFiles = ep.knownHostsFiles.length ? ep.knownHostsFiles : [ctx.paths.knownHostsPath];
  const knownFiles = [...userFiles, ...ep.globalKnownHostsFiles];
  const hostLabel = label(ep);
  const timeoutMs = connectTimeout(ep, ctx);
  const client = new (loadSsh2().Client)();
  return new Promise<Client>((resolve, reject) => {
    let failure: Error | undefined;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // destroy, not end: a server that never answered would keep a half-closed socket open.
      client.destroy();
      reject(err);
    };
    // Every wait for the server is bounded by `timeoutMs`, and the error names the stage it stopped in; the time a question
    // to the user is open is not counted (timer paused). ssh2's readyTimeout cannot pause: one timer from connect to
    // USERAUTH_SUCCESS (ssh2 1.17.0 lib/client.js startTimeout), which a slow passphrase would trip.
    const wait = (stage: 'connect' | 'auth') => {
      clearTimeout(timer);
      const why =
        stage === 'connect'
          ? `unreachable: no SSH answer within ${seconds(timeoutMs)} s (host down, firewall, or wrong HostName/Port?)`
          : `no SSH answer within ${seconds(timeoutMs)} s during authentication as ${ep.user} (the server stopped answering after the key exchange)`;
      timer = setTimeout(() => fail(new SshConnectError(`${hostLabel}: ${why}`, 'unreachable')), timeoutMs);
    };
    const pause = () => clearTimeout(timer);
    wait('connect');
    const auth = authSteps(ep, ctx, hostLabel, { pause, wait });
    client.on('error', (err: Error & { level?: string; code?: string }) => {
      if (failure) return fail(failure);
      if (err.level === 'client-authentication') {
        return fail(
          new SshConnectError(
            `${hostLabel}: authentication failed as ${ep.user} (tried ${auth.tried.join(', ') || 'nothing the server accepts'}). Add your key to ssh-agent or set IdentityFile in ~/.ssh/config.`,
            'auth',
            { cause: err },
          ),
        );
      }
      if (err.level === 'client-timeout')
        return fail(new SshConnectError(`${hostLabel}: unreachable: timed out`, 'unreachable', { cause: err }));
      fail(
        new SshConnectError(`${hostLabel}: unreachable: ${networkReason(err as NodeJS.ErrnoException, ep)}`, 'unreachable', { cause: err }),
      );
    });
    client.on('close', () =>
      fail(failure ?? new SshConnectError(`${hostLabel}: unreachable: the connection closed during the handshake`, 'unreachable')),
    );
    client.on('ready', () => {
      if (settled) return;
      settled = true;
      pause();
      resolve(client);
    });
    client.connect({
      host: ep.hostName,
      port: ep.port,
      username: ep.user,
      sock,
      readyTimeout: 0, // bounded by wait() above
      keepaliveInterval: ep.serverAliveIntervalMs ?? ctx.keepaliveIntervalMs ?? 15_000,
      keepaliveCountMax: ep.serverAliveCountMax ?? 3,
      algorithms: { serverHostKey: hostKeyOrder(knownHostKeyTypes(knownFiles, ep.hostName, ep.port)) },
      hostVerifier: (blob: Buffer, verify: (ok: boolean) => void) => {
        pause(); // the user may be asked about the key
        verifyHostKey({
          files: knownFiles,
          appendTo: userFiles[0]!,
          host: ep.hostName,
          port: ep.port,
          key: hostKeyFromBlob(blob),
          prompter: ctx.prompter,
          hash: ep.hashKnownHosts,
        }).then(
          () => {
            wait('auth');
            verify(true);
          },
          (err: Error) => {
            failure = err instanceof HostKeyError ? new SshConnectError(err.message, 'host-key', { cause: err }) : err;
            verify(false);
          },
        );
      },
      authHandler: (methodsLeft, _partial, next) => {
        pause(); // the server answered; the next step may ask the user
        if (methodsLeft === null) {
          wait('auth');
          return next('none');
        }
        auth.next(methodsLeft).then(
          (m) => {
            if (m) wait('auth');
            next(m as AnyAuthMethod);
          },
          (err: Error) => {
            failure = err instanceof SshConnectError ? err : new SshConnectError(`${hostLabel}: ${err.message}`, 'auth', { cause: err });
            next(false as unknown as AnyAuthMethod);
          },
        );
      },
    });
  });
}

/** A connection through every jump host of a route; `clients` are all hops, the target last. */
export async function connectRoute(route: SshRoute, ctx: SshContext): Promise<Client[]> {
  const clients: Client[] = [];
  try {
    for (const ep of [...route.jumps, route.target]) {
      const prev = clients[clients.length - 1];
      const sock = prev ? await forwardTo(prev, ep, connectTimeout(ep, ctx)) : undefined;
      clients.push(await connectEndpoint(ep, ctx, sock));
    }
    return clients;
  } catch (err) {
    for (const c of clients.reverse()) c.end();
    throw err;
  }
}

function forwardTo(via: Client, ep: SshEndpoint, timeoutMs: number): Promise<Duplex> {
  return answerWithin<ClientChannel>(
    timeoutMs,
    (cb) => via.forwardOut('127.0.0.1', 0, ep.hostName, ep.port, cb),
    (late) => late.close(),
    () =>
      new SshConnectError(
        `${label(ep)}: unreachable: the jump host did not answer within ${seconds(timeoutMs)} s when asked for a channel to ${ep.hostName}:${ep.port}`,
        'unreachable',
      ),
  ).catch((err: Error) => {
    if (err instanceof SshConnectError) throw err;
    throw new SshConnectError(`${label(ep)}: unreachable through the jump host: ${err.message}`, 'unreachable', { cause: err });
  });
}
