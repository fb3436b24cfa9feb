import type * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';
import type { Service } from '../../core/services/services';

/** API keys of the services this window started, in SecretStorage (never settings, files on this machine, or logs). */
export class ServiceKeys {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  private id(svc: Service): string {
    return `medrl.service.apiKey:${svc.record.host}:${svc.record.dir}`;
  }

  /** A new random key for a service about to start. */
  static generate(): string {
    return `medrl-${randomBytes(24).toString('base64url')}`;
  }

  get(svc: Service): Promise<string | undefined> {
    return Promise.resolve(this.secrets.get(this.id(svc)));
  }

  async set(svc: Service, key: string): Promise<void> {
    await this.secrets.store(this.id(svc), key);
  }
}
