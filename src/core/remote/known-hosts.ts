import { createHash, createHmac, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AuthPrompter } from './auth-prompter';

/** A server's host key: its type (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, ...) and the wire blob. */
interface HostKey {
  type: string;
  blob: Buffer;
}

/** The host key in the SSH wire format starts with its type as a length-prefixed string. */
export function hostKeyFromBlob(blob: Buffer): HostKey {
  if (blob.length < 4) throw new Error('host key is too short');
  const len = blob.readUInt32BE(0);
  return { type: blob.subarray(4, 4 + len).toString('latin1'), blob };
}

/** OpenSSH's fingerprint: `SHA256:` and the unpadded base64 of the key blob's SHA-256. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The name known_hosts uses: `host` on port 22, `[host]:port` otherwise. */
function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

interface Entry {
  file: string;
  line: number;
  marker?: 'cert-authority' | 'revoked';
  patterns: string;
  type: string;
  blob: Buffer;
}

function parseFile(file: string): Entry[] {
  if (!existsSync(file)) return [];
  const out: Entry[] = [];
  readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .forEach((raw, i) => {
      const text = raw.trim();
      if (!text || text.startsWith('#')) return;
      const words = text.split(/\s+/);
      let marker: Entry['marker'];
      if (words[0]?.startsWith('@')) {
        const m = words.shift()!.slice(1);
        // Unknown markers make OpenSSH ignore the line; so do we.
        if (m !== 'cert-authority' && m !== 'revoked') return;
        marker = m;
      }
      const [patterns, type, key] = words;
      if (!patterns || !type || !key) return;
      out.push({ file, line: i + 1, marker, patterns, type, blob: Buffer.from(key, 'base64') });
    });
  return out;
}

function globMatch(pattern: string, name: string): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    'i',
  );
  return re.test(name);
}

/** OpenSSH's hashed host field: `|1|` base64(20-byte salt) `|` base64(HMAC-SHA1(salt, name)) (OpenSSH hostfile.c host_hash). */
function hashedName(name: string, salt: Buffer): string {
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
}

/** Whether a known_hosts host field (`a,b,!c`, wildcards, or a hashed `|1|salt|hash`) names this host. */
function hostMatches(patterns: string, name: string): boolean {
  if (patterns.startsWith('|1|')) {
    const [, , salt] = patterns.split('|');
    return !!salt && hashedName(name, Buffer.from(salt, 'base64')) === patterns;
  }
  let matched = false;
  for (const p of patterns.split(',')) {
    if (p.startsWith('!')) {
      if (globMatch(p.slice(1), name)) return false;
    } else if (globMatch(p, name)) matched = true;
  }
  return matched;
}

/** The same family of key: `ssh-rsa` keys sign as rsa-sha2-256/512 too. */
function sameKeyType(a: string, b: string): boolean {
  const norm = (t: string) => (t.startsWith('rsa-sha2-') ? 'ssh-rsa' : t);
  return norm(a) === norm(b);
}

type KnownHostsResult =
  | { status: 'known'; file: string; line: number }
  | { status: 'unknown'; otherTypes: string[] }
  | { status: 'changed'; file: string; line: number; knownType: string }
  | { status: 'revoked'; file: string; line: number };

/** Looks a host's key up in known_hosts files, like OpenSSH: revoked first, then a key of the same type. */
export function lookupHostKey(files: readonly string[], host: string, port: number, key: HostKey): KnownHostsResult {
  const name = knownHostsName(host, port);
  const entries = files.flatMap(parseFile).filter((e) => hostMatches(e.patterns, name) || (e.marker === 'revoked' && e.patterns === '*'));
  const revoked = entries.find((e) => e.marker === 'revoked' && e.blob.equals(key.blob));
  if (revoked) return { status: 'revoked', file: revoked.file, line: revoked.line };
  // Certificate authorities sign host certificates; plain host keys (what we verify) are never accepted through them.
  const plain = entries.filter((e) => !e.marker);
  const match = plain.find((e) => e.blob.equals(key.blob));
  if (match) return { status: 'known', file: match.file, line: match.line };
  const offending = plain.find((e) => sameKeyType(e.type, key.type));
  if (offending) return { status: 'changed', file: offending.file, line: offending.line, knownType: offending.type };
  return { status: 'unknown', otherTypes: [...new Set(plain.map((e) => e.type))] };
}

/** Key types known for a host, so the connection can ask the server for one of those first (as OpenSSH does). */
export function knownHostKeyTypes(files: readonly string[], host: string, port: number): string[] {
  const name = knownHostsName(host, port);
  return [
    ...new Set(
      files
        .flatMap(parseFile)
        .filter((e) => !e.marker && hostMatches(e.patterns, name))
        .map((e) => e.type),
    ),
  ];
}

/**
 * Adds a host's key to a known_hosts file. The name is hashed, as `ssh-keygen -H` and HashKnownHosts do, when `hash` is
 * set or the file already hides its names (a plain line there would give away what the user hashed away).
 */
function appendKnownHost(file: string, host: string, port: number, key: HostKey, opts: { hash?: boolean } = {}): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const sep = text && !text.endsWith('\n') ? '\n' : '';
  const name = knownHostsName(host, port);
  const hash = opts.hash || /^\|1\|/m.test(text);
  appendFileSync(file, `${sep}${hash ? hashedName(name, randomBytes(20)) : name} ${key.type} ${key.blob.toString('base64')}\n`, {
    mode: 0o600,
  });
}

/** A host key that does not match known_hosts; the message says what OpenSSH says, in plain words, and what to do. */
export class HostKeyError extends Error {
  constructor(
    message: string,
    readonly reason: 'changed' | 'revoked' | 'rejected',
  ) {
    super(message);
    this.name = 'HostKeyError';
  }
}

function keyName(type: string): string {
  return type
    .replace(/^ssh-/, '')
    .replace(/^ecdsa-sha2-.*/, 'ecdsa')
    .replace(/^rsa-sha2-.*/, 'rsa')
    .toUpperCase();
}

/**
 * Accepts a server's host key only if known_hosts has it, or the user says yes to its fingerprint (then it is appended).
 * A changed or revoked key is refused with no question. Never accepts silently.
 */
export async function verifyHostKey(opts: {
  files: readonly string[];
  appendTo: string;
  host: string;
  port: number;
  key: HostKey;
  prompter: AuthPrompter;
  /** HashKnownHosts yes: the appended line hides the host name. */
  hash?: boolean;
}): Promise<void> {
  const { host, port, key } = opts;
  const name = knownHostsName(host, port);
  const fp = fingerprint(key.blob);
  const found = lookupHostKey(opts.files, host, port, key);
  if (found.status === 'known') return;
  if (found.status === 'revoked') {
    throw new HostKeyError(
      `${name}: the ${keyName(key.type)} host key (${fp}) is marked @revoked in ${found.file}:${found.line}. Refusing to connect.`,
      'revoked',
    );
  }
  if (found.status === 'changed') {
    throw new HostKeyError(
      `WARNING: the host key of ${name} has changed. Someone could be intercepting the connection (a man-in-the-middle attack), ` +
        `or the host was reinstalled and got a new key. The server sent the ${keyName(key.type)} key ${fp}; ` +
        `${found.file}:${found.line} holds another ${keyName(found.knownType)} key for it. Refusing to connect. ` +
        `If you know the key changed, remove line ${found.line} from ${found.file} (ssh-keygen -R '${name}' -f '${found.file}') and connect again.`,
      'changed',
    );
  }
  const yes = await opts.prompter.confirmHostKey({
    host: name,
    keyType: key.type,
    fingerprint: fp,
    knownTypes: found.otherTypes,
  });
  if (!yes) throw new HostKeyError(`${name}: host key ${fp} not accepted; not connected`, 'rejected');
  appendKnownHost(opts.appendTo, host, port, key, { hash: opts.hash });
}
