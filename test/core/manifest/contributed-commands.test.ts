import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

// package.json's contributes.commands and the commands src/vscode registers must be the same set: a contributed command
// nobody registers fails with "command not found", a registered one nobody contributes has no title in the palette.
// The registrations are found by reading the source, so any id the scan cannot read as a string fails the test.

const ROOT = join(__dirname, '../../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  contributes: {
    commands: { command: string }[];
    views: Record<string, { id: string }[]>;
    viewsWelcome?: { contents: string }[];
    menus?: Record<string, { command?: string; submenu?: string }[]>;
    keybindings?: { command: string }[];
    walkthroughs?: { steps: { description?: string; completionEvents?: string[] }[] }[];
  };
};
const contributed = manifest.contributes.commands.map((c) => c.command);
/** VS Code's own commands that package.json may name (welcome buttons open Manage Workspace Trust). */
const VSCODE_COMMANDS = ['workbench.trust.manage'];
const viewFocusCommands = Object.values(manifest.contributes.views)
  .flat()
  .map((v) => `${v.id}.focus`);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

interface Scan {
  registered: Map<string, string>; // command id -> file:line
  executed: Map<string, string>; // ids run through executeCommand or set as a tree item's command
  unreadable: string[];
  tables: Map<string, string>; // CommandTable constants -> file:line
}

/** The string values of properties called `name` in a file: how a table of commands (`{ set: 'medrl.x' }`) is read. */
function propertyStrings(sf: ts.SourceFile, name: string): string[] {
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && n.name.text === name && ts.isStringLiteralLike(n.initializer)) {
      out.push(n.initializer.text);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/**
 * The command ids of a CommandTable: the keys of an object literal, or, for a table built from a list
 * (`Object.fromEntries(list.flatMap((c) => [[c.set, ...], [c.clear, ...]]))`), the strings of those properties in the file.
 * Undefined when an id cannot be read.
 */
function tableIds(sf: ts.SourceFile, init: ts.Expression): string[] | undefined {
  if (ts.isObjectLiteralExpression(init)) {
    const ids: string[] = [];
    for (const p of init.properties) {
      if (ts.isPropertyAssignment(p) && (ts.isStringLiteralLike(p.name) || ts.isIdentifier(p.name))) ids.push(p.name.text);
      else return undefined;
    }
    return ids;
  }
  const ids: string[] = [];
  let unreadable = false;
  const visit = (n: ts.Node) => {
    if (ts.isArrayLiteralExpression(n) && n.elements.length === 2 && ts.isArrowFunction(n.elements[1]!)) {
      const key = n.elements[0]!;
      const strings = ts.isPropertyAccessExpression(key) ? propertyStrings(sf, key.name.text) : [];
      if (strings.length === 0) unreadable = true;
      ids.push(...strings);
    }
    ts.forEachChild(n, visit);
  };
  visit(init);
  return unreadable || ids.length === 0 ? undefined : ids;
}

function scan(): Scan {
  const result: Scan = { registered: new Map(), executed: new Map(), unreadable: [], tables: new Map() };
  for (const file of sourceFiles(join(ROOT, 'src/vscode'))) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const where = (n: ts.Node) => `${relative(ROOT, file)}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
    const visit = (n: ts.Node) => {
      if (ts.isVariableDeclaration(n) && n.type?.getText(sf) === 'CommandTable' && n.initializer) {
        const ids = tableIds(sf, n.initializer);
        if (ids) for (const id of ids) result.registered.set(id, where(n));
        else result.unreadable.push(`${where(n)}: ${n.getText(sf).slice(0, 80)}`);
        result.tables.set(n.name.getText(sf), where(n));
      }
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
        const method = n.expression.name.text;
        const target = n.expression.expression.getText(sf);
        const registers =
          (method === 'command' && /(^|\.)ctx$/.test(target)) || method === 'registerCommand' || method === 'registerTextEditorCommand';
        const id = n.arguments[0];
        if (registers && id) {
          // The one registration helper itself passes its parameter on.
          const isHelper =
            ts.isIdentifier(id) &&
            ((method === 'registerCommand' && relative(ROOT, file) === 'src/vscode/ctx.ts') ||
              (method === 'command' && relative(ROOT, file) === 'src/vscode/deps.ts'));
          if (ts.isStringLiteralLike(id)) result.registered.set(id.text, where(n));
          else if (ts.isPropertyAccessExpression(id) && propertyStrings(sf, id.name.text).length > 0) {
            for (const s of propertyStrings(sf, id.name.text)) result.registered.set(s, where(n));
          } else if (!isHelper) result.unreadable.push(`${where(n)}: ${n.getText(sf).slice(0, 80)}`);
        }
        if (method === 'executeCommand' && id && ts.isStringLiteralLike(id) && id.text.startsWith('medrl.')) {
          result.executed.set(id.text, where(n));
        }
      }
      if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && n.name.text === 'command' && ts.isStringLiteralLike(n.initializer)) {
        if (n.initializer.text.startsWith('medrl.')) result.executed.set(n.initializer.text, where(n));
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return result;
}

describe('contributed commands (package.json) and registered commands (src/vscode)', () => {
  const found = scan();

  it('reads every command registration as a string', () => {
    assert.deepEqual(found.unreadable, [], 'registrations whose command id the scan cannot read: use a string literal');
    assert.ok(found.registered.size > 30, `only ${found.registered.size} registrations found: is the scan still right?`);
  });

  it('registers every command table in extension.ts', () => {
    const extension = readFileSync(join(ROOT, 'src/vscode/extension.ts'), 'utf8');
    const list = /const FEATURE_COMMANDS: CommandTable\[\] = \[([^\]]*)\]/.exec(extension);
    assert.ok(list, 'extension.ts has no FEATURE_COMMANDS list: is the scan still right?');
    const registered = list[1]!.split(',').map((t) => t.trim());
    const missing = [...found.tables].filter(([name]) => !registered.includes(name)).map(([name, where]) => `${name} (${where})`);
    assert.deepEqual(missing, [], 'command tables that extension.ts never registers');
  });

  it('registers exactly the contributed commands', () => {
    const registered = [...found.registered.keys()];
    const unregistered = contributed.filter((c) => !found.registered.has(c));
    const uncontributed = registered.filter((c) => !contributed.includes(c)).map((c) => `${c} (${found.registered.get(c)})`);
    assert.deepEqual(unregistered, [], 'contributed in package.json but never registered');
    assert.deepEqual(uncontributed, [], 'registered but not contributed in package.json');
    assert.equal(new Set(contributed).size, contributed.length, 'a command is contributed twice');
  });

  it('names only contributed commands in menus, keybindings, walkthroughs and welcome links', () => {
    const { menus = {}, keybindings = [], walkthroughs = [], viewsWelcome = [] } = manifest.contributes;
    const named = [
      ...Object.entries(menus).flatMap(([menu, items]) => items.flatMap((i) => (i.command ? [[menu, i.command]] : []))),
      ...keybindings.map((k) => ['keybindings', k.command]),
      ...walkthroughs.flatMap((w) =>
        w.steps.flatMap((s) => [
          ...[...(s.description ?? '').matchAll(/\(command:([\w.]+)/g)].map((m) => ['walkthroughs', m[1]!]),
          ...(s.completionEvents ?? [])
            .filter((e) => e.startsWith('onCommand:'))
            .map((e) => ['walkthroughs', e.slice('onCommand:'.length)]),
        ]),
      ),
      ...viewsWelcome.flatMap((v) => [...v.contents.matchAll(/\(command:([\w.]+)/g)].map((m) => ['viewsWelcome', m[1]!])),
    ];
    assert.ok(named.length > 20, `only ${named.length} references found: is the scan still right?`);
    assert.deepEqual(
      named.filter(([, c]) => !contributed.includes(c!) && !VSCODE_COMMANDS.includes(c!)).map(([where, c]) => `${where}: ${c}`),
      [],
      'package.json names commands it does not contribute',
    );
  });

  it('runs only commands that exist (executeCommand and tree items)', () => {
    const missing = [...found.executed]
      .filter(([c]) => !contributed.includes(c) && !viewFocusCommands.includes(c))
      .map(([c, where]) => `${c} (${where})`);
    assert.deepEqual(missing, []);
  });
});
