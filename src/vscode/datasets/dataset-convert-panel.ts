import * as vscode from 'vscode';
import { posix } from 'node:path';
import type { z } from 'zod';
import type { Host } from '../../core/remote/host';
import { openDataset } from '../../core/datasets/open-dataset';
import { readRows, type DatasetReader } from '../../core/datasets/dataset-reader';
import { convertDataset, type ConvertOptions } from '../../core/datasets/convert-dataset';
import { writeConverted } from '../../core/datasets/write-dataset';
import { workspaceHosts, LOCAL_HOST } from '../../core/config/workspace-config';
import { errorMessage } from '../../core/errors/located-error';
import { ConvertFromWebview, ConvertToWebview, type ConvertForm } from '../../protocol/dataset-convert';
import { openWebviewPanel } from '../webview/webview-panel';
import type { Deps } from '../deps';
import { uploadFiles } from '../../core/datasets/upload-dataset';
import type { DatasetRef } from './dataset-ref';

const PREVIEW_ROWS = 5;

function convertOptions(form: ConvertForm): ConvertOptions {
  return {
    format: form.format,
    split: form.split,
    seed: form.seed,
    mapping: {
      question: form.question,
      answer: form.answer,
      id: form.id || undefined,
      dataSource: form.dataSource || undefined,
      dataSourceName: form.dataSourceName,
      abilityName: form.abilityName,
      template: form.template || undefined,
      system: form.system || undefined,
      extra: form.extra,
    },
  };
}

/**
 * The convert form: pick which raw fields are the question, the answer and the id, a prompt template, the data_source and
 * ability names and a seeded train/test split; preview the first converted rows; write them (on the source's host) and
 * optionally upload them to a host.
 */
export async function openConvertPanel(deps: Deps, ref: DatasetRef): Promise<void> {
  const host = await deps.pool.get(ref.host);
  const reader = await openDataset(host, ref.path);
  const first = (await readRows(reader, 0, 1))[0];
  const columns = reader.declaredColumns ?? (typeof first?.value === 'object' && first.value !== null ? Object.keys(first.value) : []);
  const stem = posix.basename(ref.path).replace(/\.[^.]+$/, '');
  const source: Source = { ref, host, reader };
  openWebviewPanel(deps.ctx, {
    viewType: 'medrl.datasetConvert',
    title: `Convert ${posix.basename(ref.path)}`,
    bundle: 'dataset-convert',
    toWebview: ConvertToWebview,
    fromWebview: ConvertFromWebview,
    retainContextWhenHidden: true,
    onMessage: async (msg, post) => {
      try {
        switch (msg.type) {
          case 'ready':
            post({
              type: 'init',
              source: ref.host === LOCAL_HOST ? ref.path : `${ref.host}:${ref.path}`,
              columns: first?.key !== undefined ? ['_key', ...columns] : columns,
              sample: first?.value ?? null,
              hosts: workspaceHosts(deps.state.config)
                .map((h) => h.name)
                .filter((h) => h !== LOCAL_HOST),
              defaults: { out: `${stem}-verl`, dataSourceName: stem.replace(/[-_]?first\d+$/, '') },
            });
            return;
          case 'preview': {
            const result = await convertDataset(reader, { ...convertOptions(msg.form), split: undefined }, PREVIEW_ROWS);
            post({ type: 'preview', rows: result.train, rowsRead: result.rowsIn, problems: result.problems });
            return;
          }
          case 'write':
            await writeAndUpload(deps, source, msg, post);
            return;
        }
      } catch (err) {
        post({ type: 'error', message: errorMessage(err) });
        throw err;
      }
    },
  });
}

/** The file a convert panel reads, open on its host. */
interface Source {
  ref: DatasetRef;
  host: Host;
  reader: DatasetReader;
}

/** Converts every row, writes the files beside the source (or where the form says), and uploads them if asked. */
async function writeAndUpload(
  { ctx, pool, trees }: Deps,
  { ref, host, reader }: Source,
  msg: Extract<ConvertFromWebview, { type: 'write' }>,
  post: (msg: z.input<typeof ConvertToWebview>) => void,
): Promise<void> {
  const out = posix.isAbsolute(msg.target.out) ? msg.target.out : posix.join(posix.dirname(ref.path), msg.target.out);
  const upload = msg.target.upload;
  if (upload && !vscode.workspace.isTrusted) throw new Error('uploading to a host needs a trusted workspace');
  const files = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `MedRL: converting ${posix.basename(ref.path)}`, cancellable: true },
    async (progress, token) => {
      const ctl = new AbortController();
      token.onCancellationRequested(() => ctl.abort());
      const result = await convertDataset(reader, convertOptions(msg.form), undefined, ctl.signal);
      progress.report({ message: `writing ${result.train.length + result.test.length} rows` });
      const split = msg.form.split !== undefined;
      const written = await writeConverted(host, result, {
        out: split ? out : `${out}.${msg.target.fileFormat}`,
        split,
        fileFormat: msg.target.fileFormat,
        jsonlTwin: msg.target.jsonlTwin,
      });
      if (upload) {
        progress.report({ message: `uploading to ${upload.host}` });
        written.push(...(await uploadFiles(pool, host, written, upload.host, upload.dir)).map((f) => `${upload.host}:${f}`));
      }
      post({ type: 'written', files: written, train: result.train.length, test: result.test.length, skipped: result.problems.length });
      return written;
    },
  );
  ctx.log.info(`converted ${ref.host}:${ref.path} to ${files.join(', ')}`);
  trees.datasets.refresh();
}
