import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { openWebviewPanel } from '../webview/webview-panel';
import { fromWebview, toWebview, type FromWebview, type ToWebview } from '../../protocol/replay';
import { ReplaySession, type StepRef } from '../../core/episodes/replay-session';
import type { EpisodeFile } from '../../core/episodes/episode-file';
import { errorMessage } from '../../core/errors/located-error';
import { maskString, maskStrings, maskTurns } from '../../core/phi/mask-text';

/**
 * The episode replay panel for one source (a run, a folder, a file). The session indexes the step the user looks at first,
 * then every other step in the background (for the timeline, the signals and comparisons across steps); closing the
 * panel stops it.
 */
export function openReplayPanel(
  ctx: Ctx,
  session: ReplaySession,
  title: string,
  source: string,
  focus?: { collection: string; step: number; index: number },
): void {
  const replay = new Replay(ctx, session, title, source, focus);
  const { panel, post } = openWebviewPanel(ctx, {
    viewType: 'medrl.episodeReplay',
    title,
    bundle: 'replay',
    toWebview,
    fromWebview,
    retainContextWhenHidden: true,
    // The page asks for its page of episodes and the open episode again itself.
    phiMask: { mask: maskReplayMessage },
    onMessage: (msg) => replay.onMessage(msg),
  });
  replay.post = post;
  panel.onDidDispose(() => replay.abort.abort());
}

/** What the policy saw and wrote in a message masked: prompts, responses, ground truth, extra fields, errors. */
function maskReplayMessage(m: ToWebview): ToWebview {
  switch (m.type) {
    case 'page':
      return { ...m, rows: m.rows.map((r) => ({ ...r, extra: maskStrings(r.extra) })) };
    case 'episode': {
      const e = m.episode;
      const turns = maskTurns(e.turns);
      return {
        ...m,
        episode: { ...e, turns, groundTruth: maskString(e.groundTruth), extra: maskStrings(e.extra), raw: maskStrings(e.raw) },
      };
    }
    case 'compare': {
      const c = m.compare;
      const steps = c.steps.map((s) => ({ ...s, episodes: s.episodes.map((x) => ({ ...x, response: maskString(x.response) })) }));
      return { ...m, compare: { ...c, prompt: maskString(c.prompt), steps } };
    }
    case 'error':
      return { ...m, message: maskString(m.message) };
    default:
      return m;
  }
}

/** One replay panel's session: which step files are indexed (or being indexed), and the answers to the page. */
class Replay {
  readonly abort = new AbortController();
  private readonly indexing = new Map<EpisodeFile, Promise<void>>();
  private lastSteps = 0;
  private background: Promise<void> | undefined;
  /** The panel's post; set once the panel exists (the page's first message comes after). */
  post: (msg: ToWebview) => void = () => {};

  constructor(
    private readonly ctx: Ctx,
    private readonly session: ReplaySession,
    private readonly title: string,
    private readonly source: string,
    private readonly focus?: { collection: string; step: number; index: number },
  ) {}

  async onMessage(msg: FromWebview): Promise<void> {
    try {
      await this.answer(msg);
    } catch (err) {
      if (this.abort.signal.aborted) return;
      this.post({ type: 'error', message: errorMessage(err) });
      throw err;
    }
  }

  private async answer(msg: FromWebview): Promise<void> {
    const { session, abort } = this;
    switch (msg.type) {
      case 'ready':
        this.post({
          type: 'init',
          title: this.title,
          source: this.source,
          steps: session.steps(),
          ...(this.focus ? { focus: this.focus } : {}),
        });
        return;
      case 'query': {
        const q = msg.query;
        // The step the user looks at is indexed first; the others follow in the background.
        void this.ensureIndexed(q).then(() => this.indexAll());
        const page = await session.query(q, abort.signal);
        this.post({ type: 'page', requestId: msg.requestId, ...page });
        return;
      }
      case 'open':
        // An episode past what is indexed yet (one opened from a review disagreement): its step is indexed first.
        if (msg.index > 0 && msg.index >= session.file(msg).partial().length) await this.ensureIndexed(msg);
        this.post({ type: 'episode', episode: await session.episode(msg, msg.index) });
        return;
      case 'compare':
        await this.ensureIndexed(msg);
        this.post({ type: 'compare', compare: await session.compare(msg, msg.index) });
        return;
      case 'sendToPlayground':
        await this.sendToPlayground(msg);
        return;
    }
  }

  private async sendToPlayground(msg: Extract<FromWebview, { type: 'sendToPlayground' }>): Promise<void> {
    await this.ensureIndexed(msg);
    const samples = await this.session.playgroundSamples(msg, msg.index);
    if (!samples.length) {
      void vscode.window.showInformationMessage('MedRL: no episodes to send (the filter matches none).');
      return;
    }
    this.ctx.log.info(`sending ${samples.length} episode(s) of ${msg.collection} step ${msg.step} to the reward playground`);
    await vscode.commands.executeCommand('medrl.openRewardPlayground', { samples });
  }

  /** The step list, at most every 500 ms unless forced (a step finished indexing). */
  private postSteps(force = false): void {
    if (!force && Date.now() - this.lastSteps < 500) return;
    this.lastSteps = Date.now();
    this.post({ type: 'steps', steps: this.session.steps() });
  }

  /** Indexes a step's file once; progress goes to the page at most every 300 ms. */
  private ensureIndexed(ref: StepRef): Promise<void> {
    const file = this.session.file(ref);
    let p = this.indexing.get(file);
    if (!p) {
      let lastProgress = 0;
      p = this.session
        .indexStep(ref, {
          signal: this.abort.signal,
          onProgress: (episodes, bytes, totalBytes) => {
            if (Date.now() - lastProgress < 300) return;
            lastProgress = Date.now();
            this.post({ type: 'progress', ...ref, episodes, bytes, totalBytes });
          },
        })
        .then(
          (info) => {
            if (info.malformed.length)
              this.ctx.log.warn(
                `${file.host.name}:${file.path}: ${info.malformed.length} malformed line(s), first: line ${info.malformed[0]!.line ?? info.malformed[0]!.row}: ${info.malformed[0]!.message}`,
              );
            this.postSteps(true);
          },
          (err: unknown) => {
            if (this.abort.signal.aborted) return;
            this.ctx.log.error(`indexing ${file.host.name}:${file.path}: ${errorMessage(err)}`);
            this.post({ type: 'error', message: `indexing step ${ref.step} failed: ${errorMessage(err)}` });
          },
        );
      this.indexing.set(file, p);
    }
    return p;
  }

  /** Every step, one after another, once. */
  private indexAll(): void {
    this.background ??= (async () => {
      for (const s of this.session.steps()) {
        if (this.abort.signal.aborted) return;
        await this.ensureIndexed(s);
      }
    })();
  }
}
