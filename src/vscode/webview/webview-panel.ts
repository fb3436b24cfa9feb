import * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import type { Ctx } from '../ctx';
import { errorMessage } from '../../core/errors/located-error';
import { phiMaskState, setPhiMask } from '../../protocol/phi-mask';
import { onPhiMaskChange, phiMaskOn, setPhiMaskOn } from './phi-mask-setting';

interface WebviewPanelOptions<ToWebview extends z.ZodType, FromWebview extends z.ZodType> {
  viewType: string;
  title: string;
  /** The webview's folder under webview/, built to dist/webview/NAME.js (and NAME.css when it imports CSS). */
  bundle: string;
  toWebview: ToWebview;
  fromWebview: FromWebview;
  onMessage: (msg: z.output<FromWebview>, post: (msg: z.input<ToWebview>) => void) => void | Promise<void>;
  column?: vscode.ViewColumn;
  iconPath?: vscode.Uri | { light: vscode.Uri; dark: vscode.Uri };
  retainContextWhenHidden?: boolean;
  /**
   * For a page that shows data, which may hold identifiers (its protocol has the phi-mask messages): while `medrl.phi.mask`
   * is on, `mask` masks the text of each message before it is posted, so none of it reaches the page. The page's toggle
   * sets the setting; when the setting changes the page is told, and `resend` posts again what the page cannot ask for again.
   */
  phiMask?: { mask: (msg: z.input<ToWebview>) => z.input<ToWebview>; resend?: () => void };
}

export interface TypedWebviewPanel<ToWebview extends z.ZodType> {
  panel: vscode.WebviewPanel;
  /** Sends a message; it is validated against the protocol first, so a bug here never reaches the page. */
  post(msg: z.input<ToWebview>): void;
}

/**
 * A webview panel with a strict Content-Security-Policy (scripts and styles only from the extension, by nonce; no inline
 * code, no remote anything), resources only from dist/webview and media, and every message validated by zod both ways.
 */
export function openWebviewPanel<ToWebview extends z.ZodType, FromWebview extends z.ZodType>(
  ctx: Ctx,
  opts: WebviewPanelOptions<ToWebview, FromWebview>,
): TypedWebviewPanel<ToWebview> {
  const ext = ctx.extension.extensionUri;
  const roots = [vscode.Uri.joinPath(ext, 'dist', 'webview'), vscode.Uri.joinPath(ext, 'media')];
  const panel = vscode.window.createWebviewPanel(opts.viewType, opts.title, opts.column ?? vscode.ViewColumn.Active, {
    enableScripts: true,
    localResourceRoots: roots,
    retainContextWhenHidden: opts.retainContextWhenHidden ?? false,
    enableFindWidget: true,
  });
  if (opts.iconPath) panel.iconPath = opts.iconPath;
  panel.webview.html = webviewHtml(panel.webview, ext, opts.bundle, opts.title);
  const post = (msg: z.input<ToWebview>) => {
    const parsed = opts.toWebview.safeParse(opts.phiMask && phiMaskOn() ? opts.phiMask.mask(msg) : msg);
    if (!parsed.success) {
      ctx.log.error(`${opts.viewType}: refusing to post an invalid message: ${parsed.error.message}`);
      return;
    }
    void panel.webview.postMessage(parsed.data);
  };
  const postPhiMaskState = (on: boolean) => post(phiMaskState.parse({ type: 'phiMask', on }) as z.input<ToWebview>);
  const sub = panel.webview.onDidReceiveMessage(async (raw: unknown) => {
    const parsed = opts.fromWebview.safeParse(raw);
    if (!parsed.success) {
      ctx.log.warn(`${opts.viewType}: ignored an invalid message from the webview: ${parsed.error.message}`);
      return;
    }
    const toggle = setPhiMask.safeParse(parsed.data);
    if (opts.phiMask && toggle.success) return setPhiMaskOn(toggle.data.on);
    // Ahead of the page's first content: whether it comes masked.
    if (opts.phiMask && (parsed.data as { type?: unknown }).type === 'ready') postPhiMaskState(phiMaskOn());
    try {
      await opts.onMessage(parsed.data, post);
    } catch (err) {
      ctx.log.error(`${opts.viewType}: ${errorMessage(err)}`);
      throw err;
    }
  });
  const maskSub = opts.phiMask
    ? onPhiMaskChange((on) => {
        postPhiMaskState(on);
        opts.phiMask!.resend?.();
      })
    : undefined;
  panel.onDidDispose(() => {
    sub.dispose();
    maskSub?.dispose();
  });
  return { panel, post };
}

function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, bundle: string, title: string): string {
  const nonce = randomBytes(18).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', `${bundle}.js`));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', `${bundle}.css`));
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
    `style-src ${webview.cspSource} 'nonce-${nonce}'`,
    // The page's module is loaded by nonce; the chunks it imports (shared by all webviews) come from the extension's dist/webview.
    `script-src 'nonce-${nonce}' ${webview.cspSource}`,
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${style.toString()}" nonce="${nonce}">
</head>
<body>
<div id="app"></div>
<script type="module" nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
