import * as vscode from 'vscode';
import type { HostPool } from '../../core/remote/host-pool';
import { requireTrust } from '../workspace-trust';

/** Files of run folders on any host, opened read-only in an editor: `medrl-run://HOST/absolute/path`. */
export const RUN_FILE_SCHEME = 'medrl-run';

export function runFileUri(host: string, path: string): vscode.Uri {
  return vscode.Uri.from({ scheme: RUN_FILE_SCHEME, authority: host, path });
}

export class RunFileProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly pool: HostPool) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    // The URI names any host and path (a link in a document can open one): run folders are read in trusted workspaces only.
    requireTrust('Reading run folders');
    const host = await this.pool.get(uri.authority);
    return (await host.readFile(uri.path)).toString('utf8');
  }
}
