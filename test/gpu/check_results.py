"""Checks what the `medrl` CLI said about the GPU harness's runs against what TRL wrote.

    python3 test/gpu/check_results.py CLI_OUT_DIR

CLI_OUT_DIR is what test/gpu/run.sh captured: `ids` (NAME RUN_ID RUN_DIR per line), runs.json, checkpoints.json,
metrics-NAME.jsonl and episodes-NAME.jsonl. Ground truth, per run folder:
- output/checkpoint-<last>/trainer_state.json: `log_history` (every logged step's values), `global_step`, `max_steps`;
- output/checkpoint-N/ folders: the checkpoints;
- output/completions/completions_NNNNN.parquet: the GRPO completions (read with pyarrow).
Per run it checks: `medrl runs` says succeeded at step max_steps/max_steps, with the algorithm's headline metrics at
their last logged values; `medrl metrics` has every logged step and
every value of it (the log prints 4 significant digits, so within 1e-3 relative); `medrl checkpoints` lists each
checkpoint-N; `medrl episodes` gives every completion row of every step with its reward. Prints one line per check and a
summary per run; exit code 1 when any check fails.
"""

import json
import math
import re
import sys
from pathlib import Path

try:
    import pyarrow.parquet as pq
except ImportError:  # the completions check needs it; said once, per run that has completions
    pq = None

REL = 1e-3


def load_json_lines(path: Path):
    if not path.exists():
        return None, f'{path.name} missing'
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as err:
                return None, f'{path.name}:{n}: not JSON ({err})'
    return out, None


def same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        try:
            a, b = float(a), float(b)
        except (TypeError, ValueError):
            return a == b
    if a is None or b is None:
        return a is b
    if math.isnan(b):
        return math.isnan(a)
    return abs(a - b) <= REL * abs(b) + 1e-12


class Run:
    def __init__(self, name: str, run_id: str, folder: str):
        self.name, self.id, self.dir = name, run_id, Path(folder)
        self.results: list[tuple[str, bool, str]] = []

    def check(self, what: str, ok: bool, detail: str):
        self.results.append((what, ok, detail))

    def checkpoints(self) -> list[int]:
        out = self.dir / 'output'
        return sorted(int(m.group(1)) for p in out.glob('checkpoint-*') if (m := re.fullmatch(r'checkpoint-(\d+)', p.name)) and p.is_dir())

    def resumed_from(self) -> int:
        """The step of the checkpoint this run resumed from (its spec's resume_from_checkpoint), else 0."""
        m = re.search(r'resume_from_checkpoint:.*checkpoint-(\d+)', (self.dir / 'spec.yaml').read_text())
        return int(m.group(1)) if m else 0


def check_run(run: Run, cli: Path, runs_json, checkpoints_json):
    steps = run.checkpoints()
    if not steps:
        run.check('trainer output', False, f'no output/checkpoint-N in {run.dir}')
        return
    state = json.loads((run.dir / 'output' / f'checkpoint-{steps[-1]}' / 'trainer_state.json').read_text())
    total, last = state['max_steps'], state['global_step']
    run.check('trainer finished', last == total and (run.dir / 'exit_code').read_text().strip() == '0',
              f'exit_code {(run.dir / "exit_code").read_text().strip()}, trainer_state global_step {last}/{total}')

    # runs
    listed = [r for h in runs_json for r in h.get('runs', []) if r.get('record', {}).get('id') == run.id]
    if not listed:
        run.check('runs', False, f'{run.id} not in `medrl runs --json`')
    else:
        r = listed[0]
        p = r.get('progress', {})
        ok = r.get('state') == 'succeeded' and p.get('step') == total and p.get('totalSteps') == total
        run.check('runs', ok, f"state {r.get('state')}, step {p.get('step')}/{p.get('totalSteps')} (expected succeeded, {total}/{total})")
        # The headline beside the step (GRPO reward, SFT loss, DPO margin...): the value of the last step that logged it.
        heads = p.get('metrics', [])
        last = lambda key: next((e[key] for e in reversed(state['log_history']) if key in e), None)
        wrong = [f"{h['key']} {h['value']} != {last(h['key'])}" for h in heads if not same(h['value'], last(h['key']))]
        shown = ', '.join(f"{h['key']} {h['value']}" for h in heads) or 'none'
        run.check('runs headline', bool(heads) and not wrong, f'shown: {shown}' + (f'; wrong: {wrong}' if wrong else ''))

    # metrics: every value of every logged step of this run (a resumed run logs only the steps after its checkpoint)
    since = run.resumed_from()
    truth: dict[int, dict] = {}
    for entry in state['log_history']:
        if entry['step'] > since:
            truth.setdefault(entry['step'], {}).update({k: v for k, v in entry.items() if k != 'step'})
    lines, err = load_json_lines(cli / f'metrics-{run.name}.jsonl')
    if err:
        run.check('metrics', False, err)
    else:
        got = {}
        for line in lines:
            got.setdefault(line['step'], {}).update(line['metrics'])
        missing_steps = sorted(set(truth) - set(got))
        extra_steps = sorted(set(got) - set(truth) - {total})  # the final train_runtime dict may sit on the last step
        wrong = []
        for step, values in truth.items():
            for k, v in values.items():
                if step in got and (k not in got[step] or not same(got[step][k], v)):
                    wrong.append(f'step {step} {k}: {got[step].get(k, "missing")} != {v}')
        n_values = sum(len(v) for v in truth.values())
        detail = f'{len(truth)} steps ({min(truth)}..{max(truth)}), {n_values} values compared'
        if missing_steps:
            detail += f'; steps missing: {missing_steps}'
        if extra_steps:
            detail += f'; steps not in trainer_state: {extra_steps}'
        if wrong:
            detail += f'; {len(wrong)} wrong, e.g. ' + '; '.join(wrong[:4])
        run.check('metrics', not (missing_steps or extra_steps or wrong), detail)

    # checkpoints
    found = [c for h in checkpoints_json for r in h.get('runs', []) if r.get('run', {}).get('id') == run.id for c in r.get('checkpoints', [])]
    listed_steps = sorted(c.get('step') for c in found)
    run.check('checkpoints', listed_steps == steps, f'listed {listed_steps}, on disk checkpoint-{steps}')

    # episodes (GRPO completions)
    completions = sorted((run.dir / 'output' / 'completions').glob('completions_*.parquet'))
    if not re.search(r'^algorithm: grpo$', (run.dir / 'spec.yaml').read_text(), re.M):
        return
    if not completions:
        run.check('episodes', False, 'GRPO run without output/completions/*.parquet (MedRL passes --log_completions true)')
        return
    if pq is None:
        run.check('episodes', False, 'pyarrow is not installed: cannot read the completions ground truth')
        return
    rows = []
    for f in completions:
        rows.extend(pq.read_table(f).to_pylist())
    lines, err = load_json_lines(cli / f'episodes-{run.name}.jsonl')
    if err:
        run.check('episodes', False, err)
        return
    per_step = lambda items, key: {s: sum(1 for i in items if int(i[key]) == s) for s in sorted({int(i[key]) for i in items})}
    reward_cols = [k for k in rows[0] if k not in ('step', 'prompt', 'completion', 'advantage')]
    truth_scores = sorted(round(sum(float(r[k]) for k in reward_cols), 4) for r in rows)
    got_scores = sorted(round(float(e['score']), 4) for e in lines if e.get('score') is not None)
    role_words = [e for e in lines if any(re.match(r'^(system|user|assistant)\n', t.get('content') or '') for t in e.get('turns', []))]
    ok = per_step(lines, 'step') == per_step(rows, 'step') and got_scores == truth_scores and not role_words
    run.check('episodes', ok, f'{len(lines)} episodes for {len(rows)} completion rows over {len(completions)} steps; '
              f'per step {per_step(lines, "step")} vs {per_step(rows, "step")}; scores {"equal" if got_scores == truth_scores else "differ"} '
              f'({", ".join(reward_cols)}); turns starting with a role word: {len(role_words)}')


def main(cli: Path) -> int:
    ids = [line.split() for line in (cli / 'ids').read_text().splitlines() if line.strip()]
    runs_json = json.loads((cli / 'runs.json').read_text())
    checkpoints_json = json.loads((cli / 'checkpoints.json').read_text())
    failed = 0
    for name, run_id, folder in ids:
        run = Run(name, run_id, folder)
        try:
            check_run(run, cli, runs_json, checkpoints_json)
        except (OSError, KeyError, ValueError) as err:
            run.check('harness', False, f'{type(err).__name__}: {err}')
        bad = [r for r in run.results if not r[1]]
        failed += bool(bad)
        print(f"{'PASS' if not bad else 'FAIL'} {name} ({run_id})")
        for what, ok, detail in run.results:
            print(f"  {'ok  ' if ok else 'FAIL'} {what}: {detail}")
    print(f'{len(ids) - failed}/{len(ids)} runs passed')
    return 1 if failed or not ids else 0


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: python3 test/gpu/check_results.py CLI_OUT_DIR')
    sys.exit(main(Path(sys.argv[1])))
