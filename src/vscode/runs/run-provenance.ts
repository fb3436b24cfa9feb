import * as vscode from 'vscode';
import type { HostPool } from '../../core/remote/host-pool';
import type { RunInfo } from '../../core/runs/list-runs';
import { readRunFolderProvenance, readRunProvenance, type RunProvenance } from '../../core/runs/read-provenance';
import { provenanceLines } from '../../core/runs/provenance-text';
import { errorMessage } from '../../core/errors/located-error';
import { requireTrust } from '../workspace-trust';
import type { Ctx } from '../ctx';

/**
 * Runs' provenance, read at most once per run (a manifest never changes once written), for the Runs view's tooltips, Show
 * Run Details and the dashboard's comparison. A read that fails is forgotten, so the next hover or command tries again.
 */
export class RunProvenances {
  private readonly reads = new Map<string, Promise<RunProvenance>>();

  constructor(
    private readonly ctx: Ctx,
    private readonly pool: HostPool,
  ) {}

  get(run: Pick<RunInfo, 'host' | 'record'>): Promise<RunProvenance> {
    return this.once(run.host, run.record.id, async () => readRunProvenance(await this.pool.get(run.host), run.record));
  }

  /** A run named by another run's manifest (the run it resumed from): by its folder, whose run.json is read first. */
  getFolder(host: string, run: { id: string; dir: string }): Promise<RunProvenance> {
    return this.once(host, run.id, async () => readRunFolderProvenance(await this.pool.get(host), run.dir));
  }

  private once(host: string, id: string, read: () => Promise<RunProvenance>): Promise<RunProvenance> {
    const key = `${host}\0${id}`;
    let p = this.reads.get(key);
    if (!p) {
      p = read();
      p.catch((err: unknown) => {
        this.reads.delete(key);
        this.ctx.log.warn(`provenance of ${id} on ${host}: ${errorMessage(err)}`);
      });
      this.reads.set(key, p);
    }
    return p;
  }
}

/** A run's details as a read-only document: `medrl-run-details://HOST/RUN_ID` (provenanceLines, as `medrl runs show`). */
export const RUN_DETAILS_SCHEME = 'medrl-run-details';

export function runDetailsUri(run: RunInfo): vscode.Uri {
  return vscode.Uri.from({ scheme: RUN_DETAILS_SCHEME, authority: run.host, path: `/${run.record.id}` });
}

export class RunDetailsProvider implements vscode.TextDocumentContentProvider {
  constructor(
    private readonly provenances: RunProvenances,
    /** The run of the Runs view a URI names (listing the hosts again when it is not there yet). */
    private readonly findRun: (host: string, id: string) => Promise<RunInfo | undefined>,
  ) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    requireTrust('Reading run folders');
    const id = uri.path.replace(/^\//, '');
    const run = await this.findRun(uri.authority, id);
    if (!run) throw new Error(`run ${id} is not in the Runs view: refresh it, or check ${uri.authority} is reachable`);
    return `${provenanceLines(await this.provenances.get(run)).join('\n')}\n`;
  }
}
