import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { shellJoin, shellPath, shellQuote } from '../../../src/core/remote/shell-quote';

/** Runs printf through a real /bin/sh and returns each argument as it arrived. */
function echoThroughShell(values: string[]): string[] {
  const r = spawnSync('/bin/sh', ['-c', `for a in ${values.map(shellQuote).join(' ')}; do printf '%s\\0' "$a"; done`], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\0').slice(0, -1);
}

describe('shell quoting', () => {
  it('every string arrives byte-identical through a real shell, and nothing executes', () => {
    const hostile = fc
      .oneof(
        fc.string({ unit: 'grapheme' }),
        fc.string({
          unit: fc.constantFrom(
            "'",
            '"',
            '$',
            '(',
            ')',
            '`',
            '\\',
            ';',
            '|',
            '&',
            '\n',
            ' ',
            '*',
            '?',
            '~',
            '#',
            '!',
            '{',
            '}',
            '<',
            '>',
            'a',
            'é',
            '🩺',
          ),
        }),
      )
      .filter((s) => !s.includes('\0') && s.length > 0);
    fc.assert(
      fc.property(fc.array(hostile, { minLength: 1, maxLength: 8 }), (values) => {
        assert.deepEqual(echoThroughShell(values), values);
      }),
      { numRuns: 300 },
    );
  });

  it('command substitution stays text', () => {
    const canary = `/tmp/medrl-canary-${process.pid}`;
    assert.deepEqual(echoThroughShell([`$(touch ${canary})`, `\`touch ${canary}\``]), [`$(touch ${canary})`, `\`touch ${canary}\``]);
    assert.equal(spawnSync('test', ['-e', canary]).status, 1, 'nothing was executed');
  });

  it('leaves plain words readable and refuses NUL', () => {
    assert.equal(
      shellJoin(['python3', '-m', 'verl.trainer.main_ppo', 'trainer.n_gpus_per_node=8']),
      'python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8',
    );
    assert.equal(shellQuote("trainer.logger=['console','file']"), `'trainer.logger=['\\''console'\\'','\\''file'\\'']'`);
    assert.throws(() => shellQuote('a\0b'), /NUL/);
  });

  it('shellPath expands a leading ~/ and quotes the rest', () => {
    const r = spawnSync('/bin/sh', ['-c', `printf '%s' ${shellPath("~/runs/it's $(x)")}`], { encoding: 'utf8', env: { HOME: '/home/u' } });
    assert.equal(r.stdout, "/home/u/runs/it's $(x)");
  });
});
