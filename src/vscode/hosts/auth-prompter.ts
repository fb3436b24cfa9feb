import * as vscode from 'vscode';
import type {
  AuthPrompter,
  HostKeyQuestion,
  KeyboardInteractiveQuestion,
  SecretAnswer,
  SecretStore,
} from '../../core/remote/auth-prompter';

/** Asks in VS Code: a modal for an unknown host key, input boxes for secrets with a "remember" toggle (SecretStorage). */
export class VscodePrompter implements AuthPrompter {
  constructor(private readonly canRemember: boolean) {}

  async confirmHostKey(q: HostKeyQuestion): Promise<boolean> {
    const other = q.knownTypes.length
      ? `\n\nknown_hosts already holds other key types for it (${q.knownTypes.join(', ')}); this server offered ${q.keyType}.`
      : '';
    const pick = await vscode.window.showWarningMessage(
      `The authenticity of host ${q.host} can't be established.`,
      {
        modal: true,
        detail: `${q.keyType} key fingerprint:\n${q.fingerprint}\n\nCompare it with the one your administrator gave you. Trusting it adds the host to ~/.ssh/known_hosts.${other}`,
      },
      'Trust and Connect',
    );
    return pick === 'Trust and Connect';
  }

  passphrase(q: { host: string; keyFile: string; retry: boolean }): Promise<SecretAnswer | undefined> {
    return this.secret(`${q.retry ? 'Wrong passphrase. ' : ''}Passphrase for ${q.keyFile} (connecting to ${q.host})`, false);
  }

  password(q: { host: string; user: string; retry: boolean }): Promise<SecretAnswer | undefined> {
    return this.secret(`${q.retry ? 'Permission denied. ' : ''}Password of ${q.user}@${q.host}`, false);
  }

  async keyboardInteractive(q: KeyboardInteractiveQuestion): Promise<SecretAnswer<string[]> | undefined> {
    const value: string[] = [];
    for (const p of q.prompts) {
      // One-time codes are never remembered.
      const a = await this.secret(`${q.user}@${q.host}: ${[q.name, q.instructions, p.prompt].filter(Boolean).join(' · ')}`, p.echo, false);
      if (!a) return undefined;
      value.push(a.value);
    }
    return { value, remember: false };
  }

  private secret(prompt: string, echo: boolean, offerRemember = this.canRemember): Promise<SecretAnswer | undefined> {
    return new Promise((resolve) => {
      const box = vscode.window.createInputBox();
      let remember = false;
      const button = () => ({
        iconPath: new vscode.ThemeIcon(remember ? 'pass-filled' : 'circle-large-outline'),
        tooltip: remember ? 'Will be remembered in VS Code SecretStorage (click to forget)' : 'Remember in VS Code SecretStorage',
      });
      box.title = 'MedRL: SSH';
      box.prompt = prompt;
      box.password = !echo;
      box.ignoreFocusOut = true;
      if (offerRemember) box.buttons = [button()];
      box.onDidTriggerButton(() => {
        remember = !remember;
        box.buttons = [button()];
      });
      let done = false;
      box.onDidAccept(() => {
        done = true;
        resolve({ value: box.value, remember });
        box.hide();
      });
      box.onDidHide(() => {
        if (!done) resolve(undefined);
        box.dispose();
      });
      box.show();
    });
  }
}

/** VS Code SecretStorage as the SSH layer's SecretStore. */
export function secretStore(storage: vscode.SecretStorage): SecretStore {
  return {
    get: async (key) => storage.get(key),
    store: async (key, value) => storage.store(key, value),
    delete: async (key) => storage.delete(key),
  };
}
