import { resolve } from 'node:path';
import type { Command } from '../command';
import { printJson, printLines, UsageError } from '../command';
import { setTrusted, trustedBy, trustedFolders, trustFile, workspaceFolder } from '../workspace-trust';

export const trustCommand: Command = {
  path: ['trust'],
  summary: "Trust a workspace: let the CLI run its medrl.yaml's setup lines, its run specs and reward functions",
  usage: 'medrl trust [DIR] [--revoke] [--list] [--json]',
  details:
    'DIR: the workspace folder (default: the current one) or its medrl.yaml; trusting a folder trusts the folders inside it.\nUntil then submit, hosts status/check of a host with setup or env lines, merge, serve, services restart and reward functions on such a host refuse to run.\nThe list is kept outside every workspace: $XDG_CONFIG_HOME/medrl/trusted-workspaces.json (default ~/.config).',
  options: { revoke: { type: 'boolean' }, list: { type: 'boolean' } },
  async run(ctx) {
    if (ctx.positionals.length > 1) throw new UsageError('give one DIR');
    if (ctx.values.list) {
      if (ctx.positionals.length || ctx.values.revoke) throw new UsageError('--list takes no DIR and no --revoke');
      const folders = await trustedFolders();
      if (ctx.json) printJson(ctx, { file: trustFile(), folders });
      else printLines(ctx, folders.length ? folders : [`no trusted workspaces (${trustFile()})`]);
      return 0;
    }
    const folder = await workspaceFolder(resolve(ctx.cwd, ctx.positionals[0] ?? '.'));
    const revoke = ctx.values.revoke === true;
    const changed = await setTrusted(folder, !revoke);
    const by = revoke ? await trustedBy(folder) : undefined;
    if (ctx.json) printJson(ctx, { folder, trusted: !revoke || by !== undefined, changed, ...(by ? { trustedBy: by } : {}) });
    else
      printLines(ctx, [
        revoke
          ? `${folder}: ${changed ? 'no longer trusted' : 'was not trusted itself'}${by ? `; still trusted through ${by} (medrl trust --revoke ${by})` : ''}`
          : `${folder}: ${changed ? 'trusted' : 'already trusted'} (recorded in ${trustFile()})`,
      ]);
    return by ? 1 : 0;
  },
};
