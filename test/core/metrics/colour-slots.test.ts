import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { COLOUR_SLOTS, colourSlots } from '../../../src/core/metrics/colour-slots';

describe('run colour slots', () => {
  const runs = Array.from({ length: 10 }, (_, i) => `gpu1:/home/me/.medrl/runs/demo-pubmedqa-grpo-2026112${i}-0930-a1b2c${i}`);

  it('a run keeps its colour alone, compared in any order, and in another session (no state: its key decides)', () => {
    const alone = runs.map((r) => colourSlots([r])[0]);
    const together = colourSlots(runs);
    // Ten runs among twelve slots: those whose own slot no earlier run took keep it; compared in reverse, others keep theirs.
    const kept = runs.filter((_, i) => together[i] === alone[i]).length;
    assert.ok(kept >= 5, `most runs keep their own colour when compared (${kept} of 10)`);
    // Whichever run a comparison lists first has its own colour, whatever the others are.
    for (const [i, r] of runs.entries()) assert.equal(colourSlots([r, ...runs.filter((x) => x !== r)])[0], alone[i]);
    assert.deepEqual(colourSlots(runs), together, 'the same every time');
  });

  it('no two of up to twelve runs share a colour; past twelve, slots repeat', () => {
    assert.equal(new Set(colourSlots(runs)).size, 10);
    const many = Array.from({ length: 30 }, (_, i) => `local:/runs/r${i}`);
    const slots = colourSlots(many);
    assert.equal(new Set(slots.slice(0, COLOUR_SLOTS)).size, COLOUR_SLOTS);
    assert.ok(slots.every((s) => s >= 0 && s < COLOUR_SLOTS));
  });

  it('two runs with the same own slot: the first keeps it, the second takes the next free one', () => {
    const own = (k: string) => colourSlots([k])[0]!;
    const a = 'local:/runs/a';
    const b = Array.from({ length: 200 }, (_, i) => `local:/runs/b${i}`).find((k) => own(k) === own(a))!;
    assert.deepEqual(colourSlots([a, b]), [own(a), (own(a) + 1) % COLOUR_SLOTS]);
    assert.deepEqual(colourSlots([b, a]), [own(a), (own(a) + 1) % COLOUR_SLOTS]);
  });
});
