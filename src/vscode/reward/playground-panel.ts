import * as vscode from 'vscode';
import { LOCAL_HOST, workspaceHosts, type ResolvedHost } from '../../core/config/workspace-config';
import type { HostPool } from '../../core/remote/host-pool';
import { agreement } from '../../core/reward/agreement';
import { loadRollouts, type RunRef } from '../../core/reward/backtest';
import { loadCases, saveCases } from '../../core/reward/cases';
import { detectRewardFunctions } from '../../core/reward/detect-functions';
import { resultsCsv, resultsJsonl } from '../../core/reward/export';
import { loadSamples, sampleProblemLines } from '../../core/reward/sample-source';
import { FunctionScorer, JudgeSamplesScorer, type Scorer } from '../../core/reward/scorers';
import type { RewardSample, ScoreResult } from '../../core/scoring/sample';
import { judgeEnv, openJudge, pickJudge, type OpenedJudge } from '../../core/judge/judges';
import { describeParser } from '../../core/scoring/score-parser';
import { errorMessage, formatProblem } from '../../core/errors/located-error';
import { maskString, maskStrings } from '../../core/phi/mask-text';
import { fromPlayground, toPlayground, type FromPlayground, type ScorerRef, type ToPlayground } from '../../protocol/playground';
import { openWebviewPanel, type TypedWebviewPanel } from '../webview/webview-panel';
import type { Ctx } from '../ctx';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { judgeApiKey } from './judge-keys';

/**
 * What `medrl.openRewardPlayground` accepts: samples (from episode replay), a function (from a CodeLens), or a run whose
 * rollout dumps to back-test (scores are then compared with the ones from training).
 */
export interface PlaygroundArgs {
  samples?: RewardSample[];
  fn?: { path: string; name?: string };
  run?: RunRef;
}

type RunMessage = Extract<FromPlayground, { type: 'run' }>;

/** What a run scores: the samples picked (and their indexes among all samples) and the host of reward functions. */
interface RunBatch {
  indexes: number[];
  subset: RewardSample[];
  hostEntry: ResolvedHost;
}

/** The samples' text and what scorers answered masked: responses, prompts, ground truth, judge answers, output, errors. */
function maskPlaygroundMessage(m: ToPlayground): ToPlayground {
  switch (m.type) {
    case 'samples':
      return {
        ...m,
        samples: m.samples.map((s) => ({
          ...s,
          solution_str: maskString(s.solution_str),
          ground_truth: maskStrings(s.ground_truth),
          extra_info: maskStrings(s.extra_info),
          prompt: typeof s.prompt === 'string' ? maskString(s.prompt) : s.prompt?.map((c) => ({ ...c, content: maskString(c.content) })),
          extra: maskStrings(s.extra),
        })),
        results: maskStrings(m.results),
      };
    case 'results':
      return { ...m, results: maskStrings(m.results) };
    case 'notice':
      return { ...m, message: maskString(m.message) };
    default:
      return m;
  }
}

/**
 * The reward playground: one panel per window. It keeps a persistent worker per reward function and the judges it
 * opened for as long as it is open, so the second run of a function starts at once.
 */
export class RewardPlayground implements vscode.Disposable {
  private view: TypedWebviewPanel<typeof toPlayground> | undefined;
  private samples: RewardSample[] = [];
  /** Where the samples came from and what could not be read, shown again when the webview (re)loads. */
  private loadedFrom: { source: string; problems: string[] } = { source: '', problems: [] };
  private results: Record<'a' | 'b', Array<ScoreResult | undefined>> = { a: [], b: [] };
  private labels: Record<'a' | 'b', string> = { a: '', b: '' };
  private readonly functions = new Map<string, FunctionScorer>();
  private readonly judges = new Map<string, OpenedJudge>();
  private running: AbortController | undefined;
  private selected: ScorerRef | undefined;

  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly ctx: Ctx,
    private readonly state: WorkspaceConfigState,
    private readonly pool: HostPool,
  ) {
    // A changed medrl.yaml or judge key must reach the next run: workers and judges start again with the new settings.
    const restart = () => {
      if (this.running) return;
      this.disposeScorers();
      if (this.view) void this.sendInit();
    };
    this.disposables = [
      state.onDidChange(restart),
      ctx.extension.secrets.onDidChange((e) => {
        if (e.key.startsWith('medrl.judgeApiKey.')) restart();
      }),
    ];
  }

  open(args?: PlaygroundArgs): void {
    if (args?.fn) this.selected = { kind: 'function', path: args.fn.path, name: args.fn.name };
    if (args?.samples)
      this.setSamples(
        args.samples.map((s) => ({ ...s, data_source: s.data_source ?? '' })),
        'episode replay',
        [],
      );
    if (args?.run) void this.loadRun(args.run);
    if (this.view) {
      this.view.panel.reveal();
      void this.sendInit();
      return;
    }
    this.view = openWebviewPanel(this.ctx, {
      viewType: 'medrl.rewardPlayground',
      title: 'Reward Playground',
      bundle: 'playground',
      toWebview: toPlayground,
      fromWebview: fromPlayground,
      retainContextWhenHidden: true,
      phiMask: { mask: maskPlaygroundMessage, resend: () => this.postSamples() },
      onMessage: (msg) => this.onMessage(msg),
    });
    this.view.panel.onDidDispose(() => {
      this.view = undefined;
      this.running?.abort();
      this.disposeScorers();
    });
  }

  private post(msg: ToPlayground): void {
    this.view?.post(msg);
  }

  private setSamples(samples: RewardSample[], source: string, problems: string[]): void {
    this.samples = samples;
    this.loadedFrom = { source, problems };
    this.results = { a: [], b: [] };
    this.postSamples();
  }

  /** The samples and the results scored on them so far. */
  private postSamples(): void {
    const scored = (side: 'a' | 'b') => this.results[side].filter((r): r is ScoreResult => r !== undefined);
    this.post({ type: 'samples', samples: this.samples, ...this.loadedFrom, results: { a: scored('a'), b: scored('b') } });
  }

  private async onMessage(msg: FromPlayground): Promise<void> {
    switch (msg.type) {
      case 'ready':
        await this.sendInit();
        if (this.samples.length) this.postSamples();
        return;
      case 'pickDataset':
        return this.pickDataset();
      case 'addSample':
        this.samples.push(msg.sample);
        this.loadedFrom = { source: 'typed by hand', problems: [] };
        this.postSamples();
        return;
      case 'setExpected': {
        const s = this.samples[msg.index];
        if (s) {
          if (msg.expected === null) delete s.expected;
          else s.expected = msg.expected;
        }
        return;
      }
      case 'run':
        return this.run(msg);
      case 'cancel':
        this.running?.abort();
        return;
      case 'saveCases':
        return this.saveCases(msg.fn);
      case 'loadCases':
        return this.loadCases(msg.fn);
      case 'export':
        return this.export(msg.format);
    }
  }

  private async sendInit(): Promise<void> {
    const files = await vscode.workspace.findFiles('**/*.py', '{**/node_modules/**,**/.venv/**,**/site-packages/**}', 500);
    const functions: Array<{ path: string; name: string; kind: 'verl' | 'trl'; label: string }> = [];
    for (const uri of files) {
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
      for (const f of detectRewardFunctions(text))
        functions.push({ path: uri.fsPath, name: f.name, kind: f.kind, label: `${vscode.workspace.asRelativePath(uri)}:${f.name}` });
    }
    if (this.selected?.kind === 'function') {
      const sel = this.selected;
      if (!functions.some((f) => f.path === sel.path && f.name === sel.name))
        functions.unshift({
          path: sel.path,
          name: sel.name ?? 'compute_score',
          kind: 'verl',
          label: `${vscode.workspace.asRelativePath(sel.path)}:${sel.name ?? 'compute_score'}`,
        });
    }
    functions.sort((x, y) => x.label.localeCompare(y.label));
    const judges = Object.entries(this.state.config?.judges ?? {}).map(([name, j]) => ({
      name,
      model: j.model,
      url: j.url,
      temperature: j.temperature ?? 0,
      ...(j.seed === undefined ? {} : { seed: j.seed }),
      parser: j.parse ?? describeParser({ kind: 'json', field: 'score' }),
    }));
    const hosts = this.hosts().map((h) => ({ name: h.name, kind: h.kind }));
    this.post({
      type: 'init',
      functions,
      judges,
      hosts,
      host: this.state.config?.defaults.host ?? LOCAL_HOST,
      selected: this.selected,
      trusted: vscode.workspace.isTrusted,
    });
  }

  /** The hosts reward functions can run on: the workspace's pool (just `local` without a medrl.yaml). */
  private hosts(): ResolvedHost[] {
    return workspaceHosts(this.state.config);
  }

  /** Sample files of the workspace in a quick pick (JSONL, JSON, parquet), or any file through "Browse…". */
  private async pickDataset(): Promise<void> {
    const found = await vscode.workspace.findFiles(
      '**/*.{jsonl,json,parquet}',
      '{**/node_modules/**,**/.vscode/**,**/package*.json,**/tsconfig.json}',
      500,
    );
    const browse = { label: '$(folder-opened) Browse…', uri: undefined as vscode.Uri | undefined };
    const items = [
      ...found.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })).sort((x, y) => x.label.localeCompare(y.label)),
      browse,
    ];
    const pick = await vscode.window.showQuickPick(items, {
      title: 'Samples for the reward playground',
      placeHolder: 'a JSONL, JSON or parquet file of samples, dataset rows or rollout dumps',
    });
    if (!pick) return;
    const uri =
      pick.uri ??
      (
        await vscode.window.showOpenDialog({
          canSelectMany: false,
          filters: { Samples: ['jsonl', 'json', 'parquet'] },
          defaultUri: this.state.root,
        })
      )?.[0];
    if (!uri) return;
    // Through the pool: in Restricted Mode its local host reads only the workspace.
    const loaded = await loadSamples(await this.pool.get(LOCAL_HOST), uri.fsPath, { limit: 5000 });
    for (const p of loaded.problems) this.ctx.log.warn(`playground samples: ${formatProblem(p)}`);
    const file = vscode.workspace.asRelativePath(uri);
    this.setSamples(loaded.samples, file, sampleProblemLines(file, loaded, formatProblem));
  }

  /** Back-test: the run's rollout dumps become the samples; a run compares the new scores with the training ones. */
  private async loadRun(run: RunRef): Promise<void> {
    try {
      const host = await this.pool.get(run.host);
      const rollouts = await loadRollouts(host, run, { limit: 5000 });
      for (const p of rollouts.problems) this.ctx.log.warn(`back-test: ${formatProblem(p)}`);
      this.setSamples(
        rollouts.samples,
        `${run.host}:${run.dir}/rollouts (${new Set(rollouts.origins.map((o) => o.step)).size} steps)`,
        rollouts.problems.filter((p) => p.severity === 'error').map(formatProblem),
      );
    } catch (err) {
      this.post({ type: 'notice', level: 'error', message: `cannot read the rollouts of ${run.dir}: ${errorMessage(err)}` });
    }
  }

  /** The default judge of medrl.yaml, opened once: its URL, model and key reach reward functions through their environment. */
  private async judge(name: string | undefined): Promise<OpenedJudge | undefined> {
    const config = this.state.config;
    if (!config || (!name && !Object.keys(config.judges).length)) return undefined;
    const [judgeName, cfg] = pickJudge(config, name);
    let judge = this.judges.get(judgeName);
    if (!judge) {
      judge = await openJudge(judgeName, cfg, {
        pool: this.pool,
        apiKey: await judgeApiKey(this.ctx, judgeName),
        cacheDir: vscode.Uri.joinPath(this.ctx.extension.globalStorageUri, 'judge-cache').fsPath,
      });
      this.judges.set(judgeName, judge);
    }
    return judge;
  }

  /** A judge, or a reward function's worker on `hostEntry` (one worker set per function and host, kept while the panel is open). */
  private async scorer(ref: ScorerRef, hostEntry: ResolvedHost): Promise<Scorer> {
    if (ref.kind === 'judge') {
      const judge = (await this.judge(ref.name))!;
      return new JudgeSamplesScorer(`judge ${judge.name}`, judge.scorer);
    }
    const hostName = hostEntry.name;
    const key = `${hostName}\u0000${ref.path}:${ref.name ?? ''}`;
    let fn = this.functions.get(key);
    if (!fn) {
      const host = await this.pool.get(hostName);
      const judge = await this.judge(undefined).catch((err: unknown) => {
        this.ctx.log.warn(`reward playground: no judge for reward functions: ${errorMessage(err)}`);
        return undefined;
      });
      fn = new FunctionScorer({
        host,
        hostEntry,
        localPath: ref.path,
        name: ref.name,
        env: judge ? judgeEnv(judge, host) : undefined,
        timeoutMs: 30_000,
        workers: 4,
        log: (line) => this.ctx.log.info(line),
      });
      this.functions.set(key, fn);
      const info = await fn.info();
      if (!info.ok) {
        this.functions.delete(key);
        fn.dispose();
        throw new Error(`${info.error}${info.traceback ? `\n${info.traceback}` : ''}`);
      }
      this.ctx.log.info(`reward playground: ${info.name} in ${info.path} (${info.kind}${info.isAsync ? ', async' : ''}) on ${hostName}`);
    }
    return fn;
  }

  private async run(msg: RunMessage): Promise<void> {
    const batch = this.runBatch(msg);
    if (!batch) return;
    const { subset, hostEntry } = batch;
    const sides: Array<['a' | 'b', ScorerRef]> = [['a', msg.a], ...(msg.b ? [['b', msg.b] as ['b', ScorerRef]] : [])];
    const abort = new AbortController();
    this.running = abort;
    try {
      const scorers = await Promise.all(sides.map(async ([side, ref]) => [side, await this.scorer(ref, hostEntry)] as const));
      for (const [side, s] of scorers) this.labels[side] = s.label;
      if (!msg.b) this.results.b = [];
      this.post({ type: 'runStarted', sides: sides.map(([s]) => s), labels: { ...this.labels }, total: subset.length });
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'MedRL: reward playground', cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => abort.abort());
          await this.scoreAll(scorers, batch, { signal: abort.signal, bypassCache: msg.bypassCache }, progress);
        },
      );
      this.post({
        type: 'runDone',
        cancelled: abort.signal.aborted,
        ...this.agreementOf(msg, batch),
        casesChecked: subset.some((s) => s.expected !== undefined),
      });
    } catch (err) {
      const message = errorMessage(err);
      this.ctx.log.error(`reward playground: ${message}`);
      this.post({ type: 'notice', level: 'error', message });
      this.post({ type: 'runDone', cancelled: true, agreement: null, against: null, casesChecked: false });
    } finally {
      this.running = undefined;
    }
  }

  /** The samples and host a run asks for; undefined, with a notice to the webview, when it cannot start. */
  private runBatch(msg: RunMessage): RunBatch | undefined {
    if (!vscode.workspace.isTrusted) {
      this.post({ type: 'notice', level: 'error', message: 'Trust this workspace to run reward functions and judges.' });
      return undefined;
    }
    if (this.running) {
      this.post({ type: 'notice', level: 'error', message: 'A run is going on: cancel it first.' });
      return undefined;
    }
    const indexes = msg.indexes ?? this.samples.map((_, i) => i);
    const subset = indexes.map((i) => this.samples[i]!).filter(Boolean);
    if (!subset.length) {
      this.post({ type: 'notice', level: 'error', message: 'No samples: load a dataset or add one by hand.' });
      return undefined;
    }
    const hostEntry = this.hosts().find((h) => h.name === msg.host);
    if (!hostEntry) {
      this.post({
        type: 'notice',
        level: 'error',
        message: `No host "${msg.host}" in medrl.yaml: pick one of ${this.hosts()
          .map((h) => h.name)
          .join(', ')}.`,
      });
      return undefined;
    }
    return { indexes, subset, hostEntry };
  }

  /** Scores the batch with every side's scorer at once; one progress bar counts them all. */
  private async scoreAll(
    scorers: ReadonlyArray<readonly ['a' | 'b', Scorer]>,
    batch: RunBatch,
    opts: { signal: AbortSignal; bypassCache: boolean },
    progress: vscode.Progress<{ message?: string; increment?: number }>,
  ): Promise<void> {
    let done = 0;
    const total = batch.subset.length * scorers.length;
    await Promise.all(
      scorers.map(([side, scorer]) =>
        this.scoreSide(side, scorer, batch, opts, () => {
          done++;
          progress.report({ message: `${done}/${total} scored`, increment: 100 / total });
        }),
      ),
    );
  }

  /** One side's scores, kept for export and posted to the webview in batches every 150 ms. */
  private async scoreSide(
    side: 'a' | 'b',
    scorer: Scorer,
    { indexes, subset }: RunBatch,
    opts: { signal: AbortSignal; bypassCache: boolean },
    onScored: () => void,
  ): Promise<void> {
    const pending: ScoreResult[] = [];
    let count = 0;
    const flush = () => {
      if (!pending.length) return;
      this.post({ type: 'results', side, results: pending.splice(0), done: count, total: subset.length });
    };
    const timer = setInterval(flush, 150);
    try {
      await scorer.run(subset, {
        ...opts,
        onResult: (r) => {
          const result = { ...r, index: indexes[r.index]! };
          this.results[side][result.index] = result;
          pending.push(result);
          count++;
          onScored();
        },
      });
    } finally {
      clearInterval(timer);
      flush();
    }
  }

  /** Side by side: A against B; alone on rollout dumps: A against the scores from training (back-test). */
  private agreementOf(
    msg: RunMessage,
    { indexes, subset }: RunBatch,
  ): Pick<Extract<ToPlayground, { type: 'runDone' }>, 'agreement' | 'against'> {
    const against = msg.b ? 'b' : subset.some((s) => s.trainingScore !== undefined) ? 'training' : null;
    const other = against === 'b' ? indexes.map((i) => this.results.b[i]?.score) : subset.map((s) => s.trainingScore);
    const agree = against
      ? agreement(
          indexes.map((i) => this.results.a[i]?.score),
          other,
          msg.threshold,
        )
      : null;
    return { agreement: agree ? { ...agree, disagreements: agree.disagreements.map((k) => indexes[k]!) } : null, against };
  }

  private async saveCases(ref: ScorerRef): Promise<void> {
    if (ref.kind !== 'function') {
      this.post({ type: 'notice', level: 'error', message: 'Regression cases belong to a reward function: pick one as scorer A.' });
      return;
    }
    const { path, count } = await saveCases(ref.path, this.samples);
    this.ctx.log.info(`reward playground: ${count} regression cases written to ${path}`);
    this.post({ type: 'notice', level: 'info', message: `${count} regression case(s) saved to ${vscode.workspace.asRelativePath(path)}` });
  }

  private async loadCases(ref: ScorerRef): Promise<void> {
    if (ref.kind !== 'function') {
      this.post({ type: 'notice', level: 'error', message: 'Regression cases belong to a reward function: pick one as scorer A.' });
      return;
    }
    const { path, cases, problems } = await loadCases(await this.pool.get(LOCAL_HOST), ref.path).catch((err: unknown) => {
      throw new Error(`no regression cases for ${vscode.workspace.asRelativePath(ref.path)}: ${errorMessage(err)}`);
    });
    this.setSamples(cases, vscode.workspace.asRelativePath(path), problems.map(formatProblem));
  }

  private async export(format: 'csv' | 'jsonl'): Promise<void> {
    const sides = (['a', 'b'] as const)
      .filter((s) => this.results[s].length)
      .map((s) => ({ label: this.labels[s] || s, results: this.results[s] }));
    const target = await vscode.window.showSaveDialog({
      filters: { [format.toUpperCase()]: [format] },
      defaultUri: this.state.root && vscode.Uri.joinPath(this.state.root, `reward-results.${format}`),
    });
    if (!target) return;
    const text = format === 'csv' ? resultsCsv(this.samples, sides) : resultsJsonl(this.samples, sides);
    await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(text));
    this.post({ type: 'notice', level: 'info', message: `Results exported to ${vscode.workspace.asRelativePath(target)}` });
  }

  private disposeScorers(): void {
    for (const f of this.functions.values()) f.dispose();
    this.functions.clear();
    for (const j of this.judges.values()) void j.close();
    this.judges.clear();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.running?.abort();
    this.view?.panel.dispose();
    this.disposeScorers();
  }
}
