// ESLint keeps the layering (only src/vscode talks to VS Code; webviews see only the message protocol) and a small,
// high-signal set of typescript-eslint's recommended rules. Formatting is Prettier's job, so no stylistic rules here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const vscodeApi = { name: 'vscode', message: 'Only src/vscode may use the VS Code API: keep core, CLI, webviews and tests VS Code-free.' };
const vscodeLayer = {
  regex: '(^|/)vscode/',
  message: 'Only src/vscode may import from src/vscode: the core, the CLI and the webviews must run without VS Code.',
};
// Browser code sees the host through the typed messages in src/protocol. These core modules are pure (no node:*, no I/O)
// and are shared with the webviews as they are; anything else from src/core needs to move behind src/protocol first.
const browserSafeCore = [
  'src/core/format/row-line',
  'src/core/metrics/metric-value',
  'src/core/metrics/metric-series',
  'src/core/metrics/headline-defs',
  'src/core/phi/phi-categories',
  'src/core/phi/masked-segments',
];
const coreFromWebview = {
  regex: `(^|/)src/core/(?!(${browserSafeCore.map((m) => m.slice('src/core/'.length)).join('|')})$)`,
  message: 'Webviews import only src/protocol (and the few pure core modules listed in eslint.config.mjs): src/core is host code.',
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      // AssemblyScript (its own tsconfig): compiled by scripts/build-wasm.mjs, not by tsc.
      'src/core/metrics/wasm/**',
      'node_modules/**',
      'test-results/**',
      'bench/.data/**',
      '.medrl-demo/**',
      '.tools/**',
      'media/**',
      'python/**',
      'standins/**',
      'demo/**',
      'configs/**',
      'test/fixtures/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // Control characters in regexes are the point where terminal output is cleaned (ANSI escapes, NULs).
      'no-control-regex': 'off',
      // Indented YAML and shell lines are matched with their literal spaces, which read better than ` {4}`.
      'no-regex-spaces': 'off',
      // A rethrown error names the place and quotes the cause's errorMessage(), which is what a user reads; no cause chain.
      'preserve-caught-error': 'off',
      // A `_` prefix marks what is kept for its position (an interface's parameter, a destructured field left out).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // TypeScript checks names in .ts files (typescript-eslint turns no-undef off there); the .mjs scripts run on node.
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly' } },
  },
  // Layering. Rule options are not merged across config objects, so each folder states all of its restrictions.
  {
    files: ['**/*.{ts,mjs,js}'],
    ignores: ['src/vscode/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [vscodeApi] }] },
  },
  {
    files: ['src/core/**', 'src/cli/**', 'src/protocol/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [vscodeApi], patterns: [vscodeLayer] }] },
  },
  {
    files: ['webview/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [vscodeApi], patterns: [vscodeLayer, coreFromWebview] }] },
  },
);
