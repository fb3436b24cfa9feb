/**
 * How the SSH layer asks the user something while connecting: VS Code input boxes in the extension, the terminal in the
 * CLI. `undefined` means the user cancelled. Secrets the user asks to remember go to a SecretStore (VS Code SecretStorage);
 * nothing else ever stores them.
 */
export interface AuthPrompter {
  /** An unknown host: show the fingerprint and ask whether to trust it (and add it to known_hosts). */
  confirmHostKey(q: HostKeyQuestion): Promise<boolean>;
  passphrase(q: { host: string; keyFile: string; retry: boolean }): Promise<SecretAnswer | undefined>;
  password(q: { host: string; user: string; retry: boolean }): Promise<SecretAnswer | undefined>;
  /** Keyboard-interactive (2FA, OTP): one answer per prompt. */
  keyboardInteractive(q: KeyboardInteractiveQuestion): Promise<SecretAnswer<string[]> | undefined>;
}

export interface HostKeyQuestion {
  /** `host` or `[host]:port`, as known_hosts names it. */
  host: string;
  keyType: string;
  fingerprint: string;
  /** Key types known_hosts already holds for this host (the server offered another type). */
  knownTypes: string[];
}

export interface KeyboardInteractiveQuestion {
  host: string;
  user: string;
  name: string;
  instructions: string;
  prompts: { prompt: string; echo: boolean }[];
}

export interface SecretAnswer<T = string> {
  value: T;
  /** The user asked to keep it in the SecretStore. */
  remember: boolean;
}

/** Where remembered secrets live: VS Code SecretStorage. The CLI has none and never stores a secret. */
export interface SecretStore {
  get(key: string): Promise<string | undefined>;
  store(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

/** A prompter for places where nobody can answer (CI, pipes): every question fails with what to do instead. */
export class NonInteractivePrompter implements AuthPrompter {
  async confirmHostKey(q: HostKeyQuestion): Promise<boolean> {
    throw new Error(
      `${q.host} is not in known_hosts (its ${q.keyType} key is ${q.fingerprint}) and there is no terminal to ask. ` +
        `Check the fingerprint and add the host first, e.g. run \`ssh ${q.host.replace(/^\[(.*)\]:(\d+)$/, '-p $2 $1')}\` once, or ` +
        `\`ssh-keyscan ${q.host.replace(/^\[(.*)\]:(\d+)$/, '-p $2 $1')} >> ~/.ssh/known_hosts\` after checking the key.`,
    );
  }

  async passphrase(q: { host: string; keyFile: string }): Promise<undefined> {
    throw new Error(
      `${q.host}: ${q.keyFile} is encrypted and there is no terminal to ask for its passphrase: add it to ssh-agent (ssh-add ${q.keyFile})`,
    );
  }

  async password(q: { host: string; user: string }): Promise<undefined> {
    throw new Error(
      `${q.host}: the server asks ${q.user}'s password and there is no terminal to ask: set up key authentication (ssh-copy-id)`,
    );
  }

  async keyboardInteractive(q: KeyboardInteractiveQuestion): Promise<undefined> {
    throw new Error(
      `${q.host}: the server asks ${q.prompts.map((p) => p.prompt.trim()).join(', ') || 'questions'} (keyboard-interactive) and there is no terminal to ask`,
    );
  }
}
