import * as vscode from 'vscode';
import type { ResolvedHost } from '../../core/config/workspace-config';
import type { Checkpoint } from '../../core/checkpoints/checkpoint';
import { loadYamlWithSchema } from '../../core/config/yaml-document';
import { runSpecSchema } from '../../core/runs/run-spec';
import { restartService, startService, stopService, waitForService, type Service } from '../../core/services/services';
import { serviceLaunchesOfSpec, type ServiceEngine, type ServiceLaunch } from '../../core/services/service-command';
import { checkpointServiceName, servableModel, serviceNameOf } from '../../core/services/serve-target';
import type { CommandTable, Deps } from '../deps';
import { findHost, LOCAL_HOST, workspaceHosts } from '../../core/config/workspace-config';
import { standinsFor } from '../checkpoints/checkpoint-commands';
import { requireTrust } from '../workspace-trust';
import { ServiceKeys } from './service-keys';
import type { ServicesNode } from './services-tree';
import { runSpecDocument } from '../active-file';
import { pickCheckpoint, pickService } from '../pickers';

type SvcArg = Extract<ServicesNode, { kind: 'service' }>;

const ENGINES: { label: string; engine: ServiceEngine; detail: string }[] = [
  { label: 'vLLM', engine: 'vllm', detail: 'vllm serve MODEL --port P --served-model-name NAME' },
  { label: 'SGLang', engine: 'sglang', detail: 'python -m sglang.launch_server --model-path MODEL --port P' },
  {
    label: 'TRL vllm-serve',
    engine: 'trl-vllm-serve',
    detail: 'trl vllm-serve --model MODEL --port P (generation server for TRL GRPO with vllm_mode=server)',
  },
];

/** Serve checkpoints and models, start a spec's services, and stop, restart and reach them from the Services view. */
export const SERVICE_COMMANDS: CommandTable = {
  'medrl.checkpoints.serve': serveCheckpointCommand,
  'medrl.services.serveModel': serveModelCommand,
  'medrl.services.startFromSpec': startServicesFromSpecCommand,
  'medrl.services.stop': stopServiceCommand,
  'medrl.services.restart': restartServiceCommand,
  'medrl.services.copyUrl': copyServiceUrlCommand,
  'medrl.services.copyApiKey': copyServiceApiKeyCommand,
  'medrl.services.openUrl': openServiceUrlCommand,
  'medrl.services.showLog': showServiceLogCommand,
};

/** Starts a service with a fresh API key (kept in SecretStorage) and follows it until ready or failed. */
async function serve({ ctx, pool, trees, serviceKeys }: Deps, h: ResolvedHost, launch: ServiceLaunch): Promise<void> {
  const host = await pool.get(h.name);
  const key = launch.engine === 'trl-vllm-serve' ? undefined : ServiceKeys.generate();
  const standins = standinsFor(ctx, h);
  const svc = await startService(
    host,
    h.runsDir,
    { setup: h.setup, env: h.env, ...(h.workdir ? { workdir: h.workdir } : {}), ...launch, ...(standins ? { standins } : {}) },
    key,
  );
  if (key) await serviceKeys.set(svc, key);
  ctx.log.info(`service ${svc.name} (${launch.engine}, ${svc.model}) on ${h.name}:${svc.port}: run ${svc.record.dir}`);
  trees.services.refresh();
  await vscode.commands.executeCommand('medrl.services.focus');
  const status = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `MedRL: starting ${svc.name} on ${h.name}`, cancellable: true },
    async (progress, token) => {
      const ac = new AbortController();
      token.onCancellationRequested(() => ac.abort());
      const localPort = await trees.services.localPort(h, svc);
      return waitForService(host, svc, localPort, {
        apiKey: key,
        signal: ac.signal,
        onStatus: (s) => progress.report({ message: `${s.state}${s.detail ? `: ${s.detail}` : ''}` }),
      });
    },
  );
  trees.services.refresh();
  if (status.state !== 'ready')
    throw new Error(
      `service ${svc.name} ${status.state}${status.detail ? ` (${status.detail})` : ''}: ${(status.logTail ?? '').split('\n').slice(-5).join(' | ')}`,
    );
  const url = `http://127.0.0.1:${await trees.services.localPort(h, svc)}/v1`;
  const pick = await vscode.window.showInformationMessage(
    `MedRL: ${svc.name} is ready at ${url} (model ${svc.servedModelName})`,
    'Copy URL',
    'Copy API Key',
  );
  if (pick === 'Copy URL') await vscode.env.clipboard.writeText(url);
  if (pick === 'Copy API Key' && key) await vscode.env.clipboard.writeText(key);
}

async function pickEngine(): Promise<ServiceEngine | undefined> {
  return (await vscode.window.showQuickPick(ENGINES, { placeHolder: 'Serve with' }))?.engine;
}

/** Serves a checkpoint (its HuggingFace folder) on its host. */
export function serveCheckpointCommand(deps: Deps) {
  return async (node?: { host: ResolvedHost; ck: Checkpoint }): Promise<void> => {
    requireTrust();
    const target = node?.ck
      ? node
      : await pickCheckpoint(deps, {
          title: 'Checkpoint to serve',
          filter: (ck) => !!ck.servable,
          none: 'No checkpoint with a HuggingFace folder to serve on the hosts in medrl.yaml: merge a verl checkpoint first (Merge to HuggingFace).',
        });
    if (!target) return;
    const model = servableModel(target.ck);
    const engine = await pickEngine();
    if (!engine) return;
    const name = checkpointServiceName(target.ck);
    await serve(deps, target.host, { name, engine, model, servedModelName: name });
  };
}

/** Serves a model typed by hub id or folder on a host of medrl.yaml. */
export function serveModelCommand(deps: Deps) {
  return async (): Promise<void> => {
    requireTrust();
    const hosts = workspaceHosts(deps.state.config);
    const h =
      hosts.length === 1
        ? hosts[0]
        : (
            await vscode.window.showQuickPick(
              hosts.map((x) => ({ label: x.name, h: x })),
              { placeHolder: 'Host to serve on' },
            )
          )?.h;
    if (!h) return;
    const model = await vscode.window.showInputBox({
      title: `Serve a model on ${h.name}`,
      prompt: 'Hub id or model folder on the host',
      placeHolder: 'Qwen/Qwen2.5-7B-Instruct',
    });
    if (!model) return;
    const engine = await pickEngine();
    if (!engine) return;
    const name = serviceNameOf(model.split('/').pop() ?? model);
    await serve(deps, h, { name, engine, model, servedModelName: name });
  };
}

/** Starts the services a run spec declares (those without judge:), each on its host. */
export function startServicesFromSpecCommand(deps: Deps) {
  return async (uri?: vscode.Uri): Promise<void> => {
    requireTrust();
    const { state } = deps;
    const doc = await runSpecDocument(uri, state);
    if (!doc) return;
    const spec = loadYamlWithSchema(doc.getText(), runSpecSchema, vscode.workspace.asRelativePath(doc.uri));
    const hosts = workspaceHosts(state.config);
    const runHost = findHost(hosts, spec.host ?? state.config?.defaults.host ?? LOCAL_HOST, 'host');
    const launches = serviceLaunchesOfSpec(spec, { host: runHost.name, scheduler: spec.scheduler ?? runHost.scheduler });
    if (!launches.length)
      throw new Error(`${vscode.workspace.asRelativePath(doc.uri)} has no services to start (services: entries without judge:)`);
    for (const l of launches) {
      await serve(deps, findHost(hosts, l.host, `services.${l.launch.name}.host`), l.launch);
    }
  };
}

/** The service a command acts on: the Services view's item it was run on, or one the user picks; undefined when they back out. */
async function svcArg(deps: Deps, node: SvcArg | undefined, what: string): Promise<SvcArg | undefined> {
  if (node?.kind === 'service') return node;
  return pickService(deps, { title: `Service to ${what}` });
}

async function urlOf({ trees }: Deps, node: SvcArg): Promise<string> {
  return `http://127.0.0.1:${await trees.services.localPort(node.host, node.svc)}/v1`;
}

export function stopServiceCommand(deps: Deps) {
  const { ctx, pool, trees } = deps;
  return async (node?: SvcArg): Promise<void> => {
    requireTrust();
    const n = await svcArg(deps, node, 'stop');
    if (!n) return;
    await stopService(await pool.get(n.host.name), n.svc);
    await trees.services.closeForward(n.svc);
    ctx.log.info(`stopped service ${n.svc.name} on ${n.host.name}`);
    trees.services.refresh();
  };
}

export function restartServiceCommand(deps: Deps) {
  const { ctx, pool, trees, serviceKeys } = deps;
  return async (node?: SvcArg): Promise<void> => {
    requireTrust();
    const n = await svcArg(deps, node, 'restart');
    if (!n) return;
    // The key is kept only in SecretStorage: the restart hands it to the service again.
    const svc: Service = await restartService(await pool.get(n.host.name), n.svc, await serviceKeys.get(n.svc));
    ctx.log.info(`restarted service ${svc.name} on ${n.host.name}`);
    trees.services.refresh();
  };
}

// The URL, key and log are the host's: its port is forwarded and its run folder read only in a trusted workspace.
export function copyServiceUrlCommand(deps: Deps) {
  return async (node?: SvcArg): Promise<void> => {
    requireTrust();
    const n = await svcArg(deps, node, 'copy the URL of');
    if (!n) return;
    const url = await urlOf(deps, n);
    await vscode.env.clipboard.writeText(url);
    void vscode.window.showInformationMessage(`MedRL: copied ${url}`);
  };
}

export function copyServiceApiKeyCommand(deps: Deps) {
  return async (node?: SvcArg): Promise<void> => {
    requireTrust();
    const n = await svcArg(deps, node, 'copy the API key of');
    if (!n) return;
    const key = await deps.serviceKeys.get(n.svc);
    if (!key) throw new Error('this service has no API key in this VS Code (it was started without one, or elsewhere)');
    await vscode.env.clipboard.writeText(key);
    void vscode.window.showInformationMessage('MedRL: copied the API key');
  };
}

export function openServiceUrlCommand(deps: Deps) {
  return async (node?: SvcArg): Promise<void> => {
    requireTrust();
    const n = await svcArg(deps, node, 'open');
    if (n) await vscode.env.openExternal(vscode.Uri.parse(`${await urlOf(deps, n)}/models`));
  };
}

export function showServiceLogCommand(deps: Deps) {
  const { pool } = deps;
  return async (node?: SvcArg): Promise<void> => {
    requireTrust();
    const n = await svcArg(deps, node, 'show the log of');
    if (!n) return;
    const host = await pool.get(n.host.name);
    const log = `${n.svc.record.dir}/output.log`;
    // The last MiB is what says why a server failed; a long-running server's log can be far bigger.
    const size = (await host.stat(log)).size;
    const text = (await host.readFile(log, { start: Math.max(0, size - (1 << 20)) })).toString('utf8');
    const doc = await vscode.workspace.openTextDocument({ content: text, language: 'log' });
    await vscode.window.showTextDocument(doc, { preview: true });
  };
}
