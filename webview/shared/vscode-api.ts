import type { z } from 'zod';
import { maskedNodes, maskedPlainText } from './masked-text';

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();

/**
 * The page's end of a webview protocol: messages from the extension are validated with zod before they are used
 * (an invalid one is reported on the console and dropped), and messages to the extension are typed.
 */
export function connect<ToWebview extends z.ZodType, FromWebview extends z.ZodType>(
  toWebview: ToWebview,
  _fromWebview: FromWebview,
  onMessage: (msg: z.output<ToWebview>) => void,
): { post(msg: z.input<FromWebview>): void; getState<T>(): T | undefined; setState(state: unknown): void } {
  window.addEventListener('message', (event: MessageEvent<unknown>) => {
    const parsed = toWebview.safeParse(event.data);
    if (!parsed.success) {
      console.error('MedRL: dropped an invalid message from the extension', parsed.error.issues);
      return;
    }
    onMessage(parsed.data);
  });
  return {
    post: (msg) => api.postMessage(msg),
    getState: <T>() => api.getState() as T | undefined,
    setState: (state) => api.setState(state),
  };
}

/**
 * Creates an element with text content only: model output and data are never parsed as HTML. Identifiers the extension
 * masked in `text` show as chips, and as their placeholders in `title`.
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { className?: string; text?: string; title?: string } = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.className) e.className = props.className;
  if (props.text !== undefined) e.append(...maskedNodes(props.text));
  if (props.title !== undefined) e.title = maskedPlainText(props.title);
  for (const c of children) e.append(c);
  return e;
}
