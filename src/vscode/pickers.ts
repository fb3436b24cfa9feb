import * as vscode from 'vscode';
import { posix } from 'node:path';
import { LOCAL_HOST, workspaceHosts, type ResolvedHost } from '../core/config/workspace-config';
import { parseRunSpec } from '../core/runs/load-run-spec';
import type { Checkpoint } from '../core/checkpoints/checkpoint';
import { checkpointPickItems } from '../core/checkpoints/checkpoint-pick';
import type { SshHostState } from '../core/remote/ssh-host';
import type { RunInfo } from '../core/runs/list-runs';
import { runPickItems } from '../core/runs/run-pick';
import type { Deps } from './deps';
import type { WorkspaceConfigState } from './config/workspace-config-state';
import type { CheckpointsNode } from './checkpoints/checkpoints-tree';
import type { DatasetRef } from './datasets/dataset-ref';
import type { DatasetsNode } from './datasets/datasets-tree';
import type { ServicesNode } from './services/services-tree';
import { runStateIcon } from './runs/runs-tree';

/**
 * The quick picks of the commands that act on a run, checkpoint, dataset, host or service: what a command asks when it
 * was run from the palette rather than on a tree item or a matching file. Each waits for medrl.yaml to be read (a command
 * run as the extension activates), lists what the views list, says in plain words when there is nothing to pick, and
 * returns undefined when the user backs out (Escape): the command then does nothing.
 */

/** The extra last item of a pick ("Browse for a folder…"): the command does what it did before pickers, on a local path. */
export const BROWSE = Symbol('browse');
export type Browse = typeof BROWSE;

interface Choice<T> extends vscode.QuickPickItem {
  value: T | Browse;
  /** What the item is, across updates of the list (default: its label and description): what was picked stays picked. */
  key?: string;
}

interface AskOptions {
  title: string;
  /** Said when nothing fits, with the next step. */
  empty: string;
  /** The label of a last item that browses instead (the pick then returns BROWSE). */
  browse?: string;
  /** Pick several; at least this many. */
  atLeast?: number;
}

/**
 * One quick pick, shown at once and busy while its items load; `load` may later `update` them (a listing that went on
 * after the first items were shown). Resolves to the picked values, BROWSE, or undefined when the user backs out or
 * nothing fits (then the user was told why).
 */
async function ask<T>(
  opts: AskOptions,
  load: (update: (items: Choice<T>[]) => void) => Promise<Choice<T>[]>,
): Promise<T[] | Browse | undefined> {
  const qp = vscode.window.createQuickPick<Choice<T>>();
  qp.title = opts.title;
  qp.busy = true;
  qp.placeholder = 'Looking on the hosts of medrl.yaml…';
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.canSelectMany = opts.atLeast !== undefined;
  let done = false;
  const gone = new Promise<undefined>((resolve) => qp.onDidHide(() => resolve(undefined)));
  const browse: Choice<T>[] = opts.browse ? [{ label: opts.browse, value: BROWSE, alwaysShow: true }] : [];
  const keyOf = (c: Choice<T>) => c.key ?? `${c.label}\0${c.description ?? ''}`;
  const show = (items: Choice<T>[]) => {
    if (done) return;
    const separator: Choice<T>[] =
      items.length && browse.length ? [{ label: '', kind: vscode.QuickPickItemKind.Separator, value: BROWSE }] : [];
    // New items clear the selection and move the highlight to the first: an update that came while the user was picking
    // (the hosts listed anew) keeps what they had picked and highlighted.
    const picked = new Set(qp.selectedItems.map(keyOf));
    const active = new Set(qp.activeItems.map(keyOf));
    qp.items = [...items, ...separator, ...browse];
    if (picked.size) qp.selectedItems = qp.items.filter((c) => picked.has(keyOf(c)));
    if (active.size) qp.activeItems = qp.items.filter((c) => active.has(keyOf(c)));
    qp.placeholder = items.length ? (opts.atLeast ? `Pick at least ${opts.atLeast}, then press Enter` : undefined) : opts.empty;
  };
  qp.show();
  try {
    const items = await Promise.race([load(show), gone]);
    if (!items) return undefined;
    if (!items.length && !browse.length) {
      void vscode.window.showInformationMessage(`MedRL: ${opts.empty}`);
      return undefined;
    }
    show(items);
    qp.busy = false;
    const picked = await Promise.race([
      gone,
      new Promise<readonly Choice<T>[]>((resolve) =>
        qp.onDidAccept(() => {
          const sel = qp.canSelectMany ? qp.selectedItems : qp.activeItems.slice(0, 1);
          if (sel.some((c) => c.value === BROWSE) || sel.length >= (opts.atLeast ?? 1)) resolve(sel);
          else qp.placeholder = `Pick at least ${opts.atLeast ?? 1} (${sel.length} picked)`;
        }),
      ),
    ]);
    if (!picked) return undefined;
    return picked.some((c) => c.value === BROWSE) ? BROWSE : picked.map((c) => c.value as T);
  } finally {
    done = true;
    qp.dispose();
  }
}

/** The one value picked in a pick without a browse item. */
function only<T>(r: T[] | Browse | undefined): T | undefined {
  return r === BROWSE ? undefined : r?.[0];
}

export interface PickRunOptions {
  title: string;
  /** Which runs fit (e.g. active ones for Cancel); all when absent. */
  filter?: (run: RunInfo) => boolean;
  /** What to say when no run fits (the default says there are no runs yet). */
  none?: string;
  browse?: string;
}

/**
 * The runs of the Runs view, newest first with state and host. Shown at once when it has some, and again once it has
 * listed the hosts anew (a run submitted from a terminal shows up); when it has none yet, after that listing.
 */
function runChoices(deps: Deps, filter: (run: RunInfo) => boolean = () => true) {
  const tree = deps.trees.runs;
  const choices = (): Choice<RunInfo>[] =>
    runPickItems(tree.runs.filter(filter)).map(({ run, ...item }) => ({
      ...item,
      iconPath: runStateIcon(run.state),
      value: run,
      key: `${run.host}\0${run.record.id}`,
    }));
  return async (update: (items: Choice<RunInfo>[]) => void): Promise<Choice<RunInfo>[]> => {
    const listing = tree.refresh();
    if (!tree.runs.length) {
      await listing;
      return choices();
    }
    // A listing that fails leaves the runs already shown (the Runs view logs why).
    void listing.then(
      () => update(choices()),
      () => undefined,
    );
    return choices();
  };
}

function noRuns(deps: Deps, none: string | undefined): string {
  const why = unavailable(deps, 'list runs');
  if (why) return why;
  return none ?? 'No runs yet on the hosts in medrl.yaml: submit a run spec first (MedRL: Submit Run Spec, or MedRL: New Run…).';
}

const NO_CONFIG = 'No valid medrl.yaml in this workspace: create one first (MedRL: Create medrl.yaml), or fix the problems it has.';

/** Why nothing on the hosts can be listed (no medrl.yaml, untrusted workspace), or undefined. */
function unavailable({ state }: Deps, what: string): string | undefined {
  if (!state.config) return NO_CONFIG;
  if (!vscode.workspace.isTrusted) return `Trust this workspace to ${what} on its hosts.`;
  return undefined;
}

/** One run, picked from every host's; BROWSE when the user chose the browse item. */
export async function pickRun(deps: Deps, opts: PickRunOptions): Promise<RunInfo | Browse | undefined> {
  await deps.state.loaded();
  const r = await ask({ title: opts.title, empty: noRuns(deps, opts.none), browse: opts.browse }, runChoices(deps, opts.filter));
  return r === BROWSE ? BROWSE : r?.[0];
}

/** Several runs (at least `atLeast`), picked from every host's. */
export async function pickRuns(deps: Deps, opts: PickRunOptions & { atLeast: number }): Promise<RunInfo[] | undefined> {
  await deps.state.loaded();
  const r = await ask({ title: opts.title, empty: noRuns(deps, opts.none), atLeast: opts.atLeast }, runChoices(deps, opts.filter));
  return r === BROWSE ? undefined : r;
}

/** A checkpoint as the Checkpoints view holds it: its host entry and the checkpoint. */
export type CheckpointPick = Extract<CheckpointsNode, { kind: 'checkpoint' }>;

/** One checkpoint from every host's (as the Checkpoints view lists them), newest first with run, step and host. */
export async function pickCheckpoint(
  deps: Deps,
  opts: { title: string; filter?: (ck: Checkpoint) => boolean; none: string },
): Promise<CheckpointPick | undefined> {
  await deps.state.loaded();
  const tree = deps.trees.checkpoints;
  const fit = opts.filter ?? (() => true);
  const r = await ask({ title: opts.title, empty: unavailable(deps, 'list checkpoints') ?? opts.none }, async () => {
    const found: CheckpointPick[] = [];
    for (const hostNode of await tree.getChildren())
      for (const runNode of await tree.getChildren(hostNode))
        for (const ck of await tree.getChildren(runNode)) if (ck.kind === 'checkpoint' && fit(ck.ck)) found.push(ck);
    return checkpointPickItems(found, (c) => c.ck).map((item) => ({ ...item, iconPath: new vscode.ThemeIcon('save') }));
  });
  return only(r);
}

/** How deep and how many files a dataset pick lists under each root (the Datasets view has no such limit: it lists as it opens). */
const DATASET_DEPTH = 3;
const DATASETS_LISTED = 500;

/** One data file under the dataset roots of medrl.yaml (as the Datasets view lists them), with its host and root. */
export async function pickDataset(deps: Deps, opts: { title: string }): Promise<DatasetRef | undefined> {
  await deps.state.loaded();
  const tree = deps.trees.datasets;
  // Local dataset roots are listed in an untrusted workspace too: only a missing medrl.yaml stops the listing.
  const empty = !deps.state.config
    ? NO_CONFIG
    : 'No dataset files under the datasets of medrl.yaml: add a folder under `datasets:` there, or open a .jsonl/.parquet/.json/.csv file and run this again.';
  const r = await ask({ title: opts.title, empty }, async () => {
    const out: Choice<DatasetRef>[] = [];
    const walk = async (node: DatasetsNode, root: string, depth: number): Promise<void> => {
      for (const child of await tree.getChildren(node)) {
        if (out.length >= DATASETS_LISTED) return;
        if (child.kind === 'file') {
          const rel = posix.relative(root, child.ref.path);
          out.push({
            label: posix.basename(rel),
            description: `${child.ref.host} · ${posix.dirname(rel) === '.' ? root : posix.join(root, posix.dirname(rel))}`,
            iconPath: new vscode.ThemeIcon('table'),
            value: child.ref,
          });
        } else if (child.kind === 'folder' && depth < DATASET_DEPTH) await walk(child, root, depth + 1);
      }
    };
    for (const root of await tree.getChildren()) if (root.kind === 'root') await walk(root, root.path, 1);
    return out;
  });
  return only(r);
}

const HOST_STATE_WORDS: Record<SshHostState['state'], string> = {
  connected: 'connected',
  connecting: 'connecting…',
  disconnected: 'not connected',
  'auth-needed': 'needs sign-in',
  unreachable: 'unreachable',
};

/** One host of medrl.yaml (with the built-in local one unless sshOnly), with its connection state as the Hosts view knows it. */
export async function pickHost(deps: Deps, opts: { title: string; sshOnly?: boolean }): Promise<ResolvedHost | undefined> {
  await deps.state.loaded();
  const tree = deps.trees.hosts;
  const empty = !deps.state.config ? NO_CONFIG : 'No SSH hosts in medrl.yaml: add one first (MedRL: Add Host from SSH Config).';
  const r = await ask({ title: opts.title, empty }, async () =>
    workspaceHosts(deps.state.config)
      .filter((h) => !opts.sshOnly || h.kind === 'ssh')
      .map((h) => {
        const state = h.kind === 'ssh' ? HOST_STATE_WORDS[tree.connectionState(h.name) ?? 'disconnected'] : 'this machine';
        return {
          label: h.name,
          description: `${h.kind === 'ssh' ? `ssh ${h.sshAlias ?? h.name}` : 'local processes'} · ${state}`,
          iconPath: new vscode.ThemeIcon(h.kind === 'local' ? 'device-desktop' : 'server'),
          value: h,
        };
      }),
  );
  return only(r);
}

/** A service as the Services view holds it. */
export type ServicePick = Extract<ServicesNode, { kind: 'service' }>;

/** One service the Services view shows (listed first if it has shown none yet), with its state and host. */
export async function pickService(deps: Deps, opts: { title: string }): Promise<ServicePick | undefined> {
  await deps.state.loaded();
  const tree = deps.trees.services;
  const empty =
    unavailable(deps, 'list services') ??
    'No services are running on the hosts in medrl.yaml: start one first (MedRL: Serve a Model..., or Serve on a checkpoint).';
  const r = await ask({ title: opts.title, empty }, async () => {
    const nodes = tree.nodes.some((n) => n.kind === 'service') ? tree.nodes : await tree.getChildren();
    return nodes
      .filter((n): n is ServicePick => n.kind === 'service')
      .sort((a, b) => Date.parse(b.svc.record.created) - Date.parse(a.svc.record.created))
      .map((n) => ({
        label: n.svc.name,
        description: `${n.status.state} · ${n.host.name} · ${n.svc.model}`,
        iconPath: new vscode.ThemeIcon('server-process'),
        value: n,
      }));
  });
  return only(r);
}

interface SpecItem extends vscode.QuickPickItem {
  uri: vscode.Uri;
  runnable: boolean;
}

/**
 * A quick pick of the workspace's run specs: name, framework and host of each; the ones whose host is in medrl.yaml
 * first (the demo's local spec before the seeds that need GPU hosts), then by file name.
 */
export async function pickRunSpec(state: WorkspaceConfigState): Promise<vscode.Uri | undefined> {
  const known = workspaceHosts(state.config).map((h) => h.name);
  const defaultHost = state.config?.defaults.host ?? LOCAL_HOST;
  const files = await vscode.workspace.findFiles('**/configs/*.{yaml,yml}', '**/node_modules/**', 200);
  if (files.length === 0)
    throw new Error('no run specs in this workspace: a run spec is a YAML file in configs/ ("MedRL: New Run…" writes one)');
  const items: SpecItem[] = [];
  for (const uri of files) {
    const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
    const { spec, problems } = parseRunSpec(text, uri.fsPath);
    const file = vscode.workspace.asRelativePath(uri);
    if (!spec) {
      const errors = problems.filter((p) => p.severity === 'error').length;
      items.push({ uri, runnable: false, label: `$(warning) ${file}`, description: `${errors} problem(s): open it to see them` });
      continue;
    }
    const host = spec.host ?? defaultHost;
    const runnable = known.includes(host);
    items.push({
      uri,
      runnable,
      label: `$(rocket) ${spec.name}`,
      description: `${spec.framework} ${spec.algorithm} · ${host}`,
      detail: runnable ? file : `${file} · host "${host}" is not in medrl.yaml`,
    });
  }
  items.sort((a, b) => Number(b.runnable) - Number(a.runnable) || a.uri.path.localeCompare(b.uri.path));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Which run spec?',
    placeHolder: 'A run spec from configs/ (specs whose host is in medrl.yaml first)',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return picked?.uri;
}
