import * as vscode from 'vscode';
import type { HostPool } from '../../core/remote/host-pool';
import type { ResolvedHost } from '../../core/config/workspace-config';
import type { Checkpoint } from '../../core/checkpoints/checkpoint';
import { loadYamlWithSchema } from '../../core/config/yaml-document';
import { runSpecSchema } from '../../core/runs/run-spec';
import { restartService, startService, stopService, waitForService, type Service } from '../../core/services/services';
import { serviceLaunchesOfSpec, type ServiceEngine, type ServiceLaunch } from '../../core/services/service-command';
import { checkpointServiceName, servableModel, serviceNameOf } from '../../core/services/serve-target';
import type { Ctx } from '../ctx';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { findHost, LOCAL_HOST, workspaceHosts } from '../../core/config/workspace-config';
import { standinsFor } from '../checkpoints/checkpoint-commands';
import { requireTrust } from '../workspace-trust';
import { ServiceKeys } from './service-keys';
import type { ServicesNode, ServicesTree } from './services-tree';
import { runSpecDocument } from '../active-file';

type SvcArg = Extract<ServicesNode, { kind: 'service' }>;

const ENGINES: { label: string; engine: ServiceEngine; detail: string }[] = [
  { label: 'vLLM', engine: 'vllm', detail: 'vllm serve MODEL --port P --served-model-name NAME' },
  { label: 'SGLang', engine: 'sglang', detail: 'python -m sglang.launch_server --model-path MODEL --port P' },
  { label: 'TRL vllm-serve', engine: 'trl-vllm-serve', detail: 'trl vllm-serve --model MODEL --port P (generation server for TRL GRPO with vllm_mode=server)' },
];

export function registerServiceCommands(ctx: Ctx, state: WorkspaceConfigState, pool: HostPool, tree: ServicesTree, keys: ServiceKeys): void {
  /** Starts a service with a fresh API key (kept in SecretStorage) and follows it until ready or failed. */
  const serve = async (h: ResolvedHost, launch: ServiceLaunch): Promise<void> => {
    const host = await pool.get(h.name);
    const key = launch.engine === 'trl-vllm-serve' ? undefined : ServiceKeys.generate();
    const standins = standinsFor(ctx, h);
    const svc = await startService(host, h.runsDir, { setup: h.setup, env: h.env, ...(h.workdir ? { workdir: h.workdir } : {}), ...launch, ...(standins ? { standins } : {}) }, key);
    if (key) await keys.set(svc, key);
    ctx.log.info(`service ${svc.name} (${launch.engine}, ${svc.model}) on ${h.name}:${svc.port}: run ${svc.record.dir}`);
    tree.refresh();
    await vscode.commands.executeCommand('medrl.services.focus');
    const status = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `MedRL: starting ${svc.name} on ${h.name}`, cancellable: true }, async (progress, token) => {
      const ac = new AbortController();
      token.onCancellationRequested(() => ac.abort());
      const localPort = await tree.localPort(h, svc);
      return waitForService(host, svc, localPort, { apiKey: key, signal: ac.signal, onStatus: (s) => progress.report({ message: `${s.state}${s.detail ? `: ${s.detail}` : ''}` }) });
    });
    tree.refresh();
    if (status.state !== 'ready') throw new Error(`service ${svc.name} ${status.state}${status.detail ? ` (${status.detail})` : ''}: ${(status.logTail ?? '').split('\n').slice(-5).join(' | ')}`);
    const url = `http://127.0.0.1:${await tree.localPort(h, svc)}/v1`;
    const pick = await vscode.window.showInformationMessage(`MedRL: ${svc.name} is ready at ${url} (model ${svc.servedModelName})`, 'Copy URL', 'Copy API Key');
    if (pick === 'Copy URL') await vscode.env.clipboard.writeText(url);
    if (pick === 'Copy API Key' && key) await vscode.env.clipboard.writeText(key);
  };

  const pickEngine = async (): Promise<ServiceEngine | undefined> => (await vscode.window.showQuickPick(ENGINES, { placeHolder: 'Serve with' }))?.engine;

  ctx.command('medrl.checkpoints.serve', async (node?: { host: ResolvedHost; ck: Checkpoint }) => {
    requireTrust();
    if (!node?.ck) throw new Error('pick a checkpoint in the Checkpoints view and choose Serve');
    const model = servableModel(node.ck);
    const engine = await pickEngine();
    if (!engine) return;
    const name = checkpointServiceName(node.ck);
    await serve(node.host, { name, engine, model, servedModelName: name });
  });

  ctx.command('medrl.services.serveModel', async () => {
    requireTrust();
    const hosts = workspaceHosts(state.config);
    const h = hosts.length === 1 ? hosts[0] : (await vscode.window.showQuickPick(hosts.map((x) => ({ label: x.name, h: x })), { placeHolder: 'Host to serve on' }))?.h;
    if (!h) return;
    const model = await vscode.window.showInputBox({ title: `Serve a model on ${h.name}`, prompt: 'Hub id or model folder on the host', placeHolder: 'Qwen/Qwen2.5-7B-Instruct' });
    if (!model) return;
    const engine = await pickEngine();
    if (!engine) return;
    const name = serviceNameOf(model.split('/').pop() ?? model);
    await serve(h, { name, engine, model, servedModelName: name });
  });

  ctx.command('medrl.services.startFromSpec', async (uri?: vscode.Uri) => {
    requireTrust();
    const doc = await runSpecDocument(uri);
    const spec = loadYamlWithSchema(doc.getText(), runSpecSchema, vscode.workspace.asRelativePath(doc.uri));
    const hosts = workspaceHosts(state.config);
    const runHost = findHost(hosts, spec.host ?? state.config?.defaults.host ?? LOCAL_HOST, 'host');
    const launches = serviceLaunchesOfSpec(spec, { host: runHost.name, scheduler: spec.scheduler ?? runHost.scheduler });
    if (!launches.length) throw new Error(`${vscode.workspace.asRelativePath(doc.uri)} has no services to start (services: entries without judge:)`);
    for (const l of launches) {
      await serve(findHost(hosts, l.host, `services.${l.launch.name}.host`), l.launch);
    }
  });

  const svcArg = (node?: SvcArg): SvcArg => {
    if (node?.kind !== 'service') throw new Error('pick a service in the Services view');
    return node;
  };
  const urlOf = async (node: SvcArg): Promise<string> => `http://127.0.0.1:${await tree.localPort(node.host, node.svc)}/v1`;

  ctx.command('medrl.services.stop', async (node?: SvcArg) => {
    requireTrust();
    const n = svcArg(node);
    await stopService(await pool.get(n.host.name), n.svc);
    await tree.closeForward(n.svc);
    ctx.log.info(`stopped service ${n.svc.name} on ${n.host.name}`);
    tree.refresh();
  });

  ctx.command('medrl.services.restart', async (node?: SvcArg) => {
    requireTrust();
    const n = svcArg(node);
    // The key is kept only in SecretStorage: the restart hands it to the service again.
    const svc: Service = await restartService(await pool.get(n.host.name), n.svc, await keys.get(n.svc));
    ctx.log.info(`restarted service ${svc.name} on ${n.host.name}`);
    tree.refresh();
  });

  // The URL, key and log are the host's: its port is forwarded and its run folder read only in a trusted workspace.
  ctx.command('medrl.services.copyUrl', async (node?: SvcArg) => {
    requireTrust();
    const url = await urlOf(svcArg(node));
    await vscode.env.clipboard.writeText(url);
    void vscode.window.showInformationMessage(`MedRL: copied ${url}`);
  });

  ctx.command('medrl.services.copyApiKey', async (node?: SvcArg) => {
    requireTrust();
    const key = await keys.get(svcArg(node).svc);
    if (!key) throw new Error('this service has no API key in this VS Code (it was started without one, or elsewhere)');
    await vscode.env.clipboard.writeText(key);
    void vscode.window.showInformationMessage('MedRL: copied the API key');
  });

  ctx.command('medrl.services.openUrl', async (node?: SvcArg) => {
    requireTrust();
    await vscode.env.openExternal(vscode.Uri.parse(`${await urlOf(svcArg(node))}/models`));
  });

  ctx.command('medrl.services.showLog', async (node?: SvcArg) => {
    requireTrust();
    const n = svcArg(node);
    const host = await pool.get(n.host.name);
    const log = `${n.svc.record.dir}/output.log`;
    // The last MiB is what says why a server failed; a long-running server's log can be far bigger.
    const size = (await host.stat(log)).size;
    const text = (await host.readFile(log, { start: Math.max(0, size - (1 << 20)) })).toString('utf8');
    const doc = await vscode.workspace.openTextDocument({ content: text, language: 'log' });
    await vscode.window.showTextDocument(doc, { preview: true });
  });
}
