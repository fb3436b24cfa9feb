import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import './style.css';
import { connect, el } from '../shared/vscode-api';
import { ConvertFromWebview, ConvertToWebview, ConvertForm, WriteTarget } from '../../src/protocol/dataset-convert';
import { rowAndLine } from '../../src/core/format/row-line';

interface ValueElement extends HTMLElement {
  value: string;
}
interface CheckElement extends HTMLElement {
  checked: boolean;
}

const NONE = '';
const api = connect(ConvertToWebview, ConvertFromWebview, onMessage);
const app = document.getElementById('app')!;

function select(options: string[], allowNone: boolean): ValueElement {
  const s = el('vscode-single-select') as unknown as ValueElement;
  if (allowNone) s.append(Object.assign(el('vscode-option', { text: '(none)' }), { value: NONE }));
  for (const o of options) s.append(Object.assign(el('vscode-option', { text: o }), { value: o }));
  return s;
}
function textField(value = '', placeholder = ''): ValueElement {
  const t = el('vscode-textfield') as unknown as ValueElement;
  t.value = value;
  if (placeholder) t.setAttribute('placeholder', placeholder);
  return t;
}
function row(label: string, control: HTMLElement, help?: string): HTMLElement {
  return el(
    'div',
    { className: 'row' },
    el('label', { text: label }),
    el('div', {}, control, ...(help ? [el('div', { className: 'help', text: help })] : [])),
  );
}

let fields:
  | {
      format: ValueElement;
      question: ValueElement;
      answer: ValueElement;
      id: ValueElement;
      dataSource: ValueElement;
      dataSourceName: ValueElement;
      abilityName: ValueElement;
      template: ValueElement;
      system: ValueElement;
      extra: ValueElement;
      split: ValueElement;
      seed: ValueElement;
      out: ValueElement;
      fileFormat: ValueElement;
      twin: CheckElement;
      uploadHost: ValueElement;
      uploadDir: ValueElement;
    }
  | undefined;
const output = el('div', { className: 'output' });
const message = el('div', { className: 'message' });

function onMessage(msg: ConvertToWebview): void {
  switch (msg.type) {
    case 'init':
      build(msg);
      return;
    case 'preview': {
      const problems = msg.problems.map((p) =>
        el('li', {
          className: 'problem',
          text: `${p.row !== undefined ? rowAndLine({ row: p.row }) : 'file'}${p.field ? ` (${p.field})` : ''}: ${p.reason}`,
        }),
      );
      output.replaceChildren(
        el('h2', { text: `Preview: the first ${msg.rows.length} converted row(s) of ${msg.rowsRead} read` }),
        ...(problems.length ? [el('ul', { className: 'problems' }, ...problems)] : []),
        ...msg.rows.map((r, i) => el('pre', { className: 'converted', text: `${i}: ${JSON.stringify(r, null, 2)}` })),
      );
      message.textContent = '';
      return;
    }
    case 'written':
      message.className = 'message ok';
      message.textContent = `Wrote ${msg.train} train and ${msg.test} test row(s)${msg.skipped ? `, skipped ${msg.skipped} (see the preview's problems)` : ''}: ${msg.files.join(', ')}`;
      return;
    case 'error':
      message.className = 'message bad';
      message.textContent = msg.message;
      return;
  }
}

function build(init: Extract<ConvertToWebview, { type: 'init' }>): void {
  const pick = (s: ValueElement, ...names: string[]) => {
    const found = names.map((n) => init.columns.find((c) => c.toLowerCase() === n.toLowerCase())).find((c) => c !== undefined);
    if (found) s.value = found;
  };
  const f = {
    format: select(['verl', 'verl-sft', 'trl-prompt-only', 'trl-prompt-completion', 'trl-conversational'], false),
    question: select(init.columns, false),
    answer: select(init.columns, false),
    id: select(init.columns, true),
    dataSource: select(init.columns, true),
    dataSourceName: textField(init.defaults.dataSourceName),
    abilityName: textField('medical'),
    template: el('vscode-textarea') as unknown as ValueElement,
    system: textField('', 'optional system message'),
    extra: textField('', 'Field A, Field B'),
    split: textField('0.9'),
    seed: textField('42'),
    out: textField(init.defaults.out),
    fileFormat: select(['parquet', 'jsonl', 'json'], false),
    twin: el('vscode-checkbox') as unknown as CheckElement,
    uploadHost: select(init.hosts, true),
    uploadDir: textField('', '~/data/NAME'),
  };
  pick(f.question, 'question', 'QUESTION', 'problem', 'Text', 'input');
  pick(f.answer, 'answer', 'final_decision', 'solution', 'label', 'output');
  pick(f.id, '_key', 'id', 'Text ID');
  f.template.setAttribute('rows', '5');
  f.template.setAttribute(
    'placeholder',
    'e.g. {CONTEXTS}\\n\\nQuestion: {QUESTION}\\nAnswer with yes, no or maybe. (empty: the question as it is)',
  );
  f.twin.setAttribute('label', 'also write a .jsonl beside each parquet file');
  fields = f;
  const previewButton = el('vscode-button', { text: 'Preview' });
  const writeButton = el('vscode-button', { text: 'Convert and write' });
  previewButton.addEventListener('click', () => {
    const form = readForm();
    if (form) api.post({ type: 'preview', form });
  });
  writeButton.addEventListener('click', () => {
    const form = readForm();
    const target = readTarget();
    if (form && target) {
      message.className = 'message';
      message.textContent = 'writing…';
      api.post({ type: 'write', form, target });
    }
  });
  const sample = el(
    'details',
    { className: 'sample' },
    el('summary', { text: 'First raw row' }),
    el('pre', { text: JSON.stringify(init.sample, null, 2) }),
  );
  app.replaceChildren(
    el('h1', { text: `Convert ${init.source}` }),
    sample,
    el(
      'div',
      { className: 'form' },
      row(
        'Target format',
        f.format,
        'verl: data_source, prompt (chat), ability, reward_model.ground_truth, extra_info; TRL: prompt/completion or messages',
      ),
      row('Question field', f.question),
      row('Answer (ground truth) field', f.answer),
      row('Id field', f.id, '_key is the id of a row in a JSON object keyed by id'),
      row('data_source field', f.dataSource, 'or a fixed name below'),
      row('data_source name', f.dataSourceName, 'picks the reward function in verl'),
      row('ability', f.abilityName),
      row(
        'Prompt template',
        f.template,
        '{FIELD} inserts a raw field ({question} and {answer} the mapped ones); lists become one item per line',
      ),
      row('System message', f.system),
      row('Extra fields', f.extra, 'copied into extra_info (verl) or extra columns (TRL), comma-separated'),
      row('Train fraction', f.split, 'e.g. 0.9; empty: no split'),
      row('Seed', f.seed, 'the same seed gives the same split'),
      row('Output', f.out, 'a folder for train/test (with a split) or a file name without extension, beside the source file'),
      row('File format', f.fileFormat),
      row('', f.twin),
      row('Upload to host', f.uploadHost),
      row('Folder on host', f.uploadDir),
    ),
    el('div', { className: 'buttons' }, previewButton, writeButton),
    message,
    output,
  );
}

function readForm(): ConvertForm | undefined {
  if (!fields) return undefined;
  const f = fields;
  const split = f.split.value.trim();
  const parsed = ConvertForm.safeParse({
    format: f.format.value,
    question: f.question.value,
    answer: f.answer.value,
    id: f.id.value || undefined,
    dataSource: f.dataSource.value || undefined,
    dataSourceName: f.dataSourceName.value.trim(),
    abilityName: f.abilityName.value.trim(),
    template: f.template.value || undefined,
    system: f.system.value.trim() || undefined,
    extra: f.extra.value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    split: split ? Number(split) : undefined,
    seed: Number(f.seed.value.trim() || '42'),
  });
  if (!parsed.success) {
    message.className = 'message bad';
    message.textContent = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    return undefined;
  }
  return parsed.data;
}

function readTarget(): WriteTarget | undefined {
  if (!fields) return undefined;
  const f = fields;
  const parsed = WriteTarget.safeParse({
    out: f.out.value.trim(),
    fileFormat: f.fileFormat.value,
    jsonlTwin: f.twin.checked,
    upload: f.uploadHost.value ? { host: f.uploadHost.value, dir: f.uploadDir.value.trim() } : undefined,
  });
  if (!parsed.success) {
    message.className = 'message bad';
    message.textContent = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    return undefined;
  }
  return parsed.data;
}

api.post({ type: 'ready' });
