import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cohenKappa, fleissKappa } from '../../../src/core/review/agreement';

const T = true;
const F = false;
const close = (x: number | null, want: number) => assert.ok(x !== null && Math.abs(x - want) < 1e-12, `${x} is not ${want}`);

describe("Cohen's kappa, against hand-computed values", () => {
  it('perfect agreement is 1', () => {
    // pp = 3, ff = 2 (n = 5): p_o = 1; pass rates 3/5 and 3/5: p_e = .6*.6 + .4*.4 = .52; kappa = (1 - .52) / (1 - .52) = 1
    const r = cohenKappa([T, T, F, F, T], [T, T, F, F, T]);
    assert.deepEqual(r.confusion, { pp: 3, pf: 0, fp: 0, ff: 2 });
    assert.equal(r.n, 5);
    assert.equal(r.agree, 1);
    close(r.kappa, 1);
  });

  it('agreement at chance is exactly 0', () => {
    // pp = 1, pf = 1, fp = 1, ff = 1: p_o = 2/4 = .5; pass rates .5 and .5: p_e = .25 + .25 = .5; kappa = (.5 - .5) / .5 = 0
    const r = cohenKappa([T, T, F, F], [T, F, T, F]);
    assert.deepEqual(r.confusion, { pp: 1, pf: 1, fp: 1, ff: 1 });
    assert.equal(r.agree, 0.5);
    assert.equal(r.kappa, 0);
  });

  it('less agreement than chance is negative', () => {
    // pairs (T,F) (T,F) (T,T) (F,T) (F,F): pp = 1, pf = 2, fp = 1, ff = 1; p_o = 2/5 = .4
    // pass rates 3/5 and 2/5: p_e = .6*.4 + .4*.6 = .48; kappa = (.4 - .48) / (1 - .48) = -.08 / .52 = -2/13
    const r = cohenKappa([T, T, T, F, F], [F, F, T, T, F]);
    assert.deepEqual(r.confusion, { pp: 1, pf: 2, fp: 1, ff: 1 });
    close(r.agree, 0.4);
    close(r.kappa, -2 / 13);
    // Complete disagreement on balanced raters: p_o = 0, p_e = .5: kappa = -.5 / .5 = -1
    close(cohenKappa([T, T, F, F], [F, F, T, T]).kappa, -1);
  });

  it('no items: undefined (null); both constant in the same class: 1 by convention; constant in opposite classes: 0', () => {
    assert.deepEqual(cohenKappa([], []), { n: 0, kappa: null, agree: null, confusion: { pp: 0, pf: 0, fp: 0, ff: 0 } });
    // p_o = 1, p_e = 1*1 + 0*0 = 1: 0/0, defined as 1 (they agree on everything)
    assert.equal(cohenKappa([F, F, F], [F, F, F]).kappa, 1);
    // p_o = 0, pass rates 1 and 0: p_e = 1*0 + 0*1 = 0; kappa = (0 - 0) / 1 = 0
    assert.equal(cohenKappa([T, T], [F, F]).kappa, 0);
    assert.throws(() => cohenKappa([T], [T, F]), /1 ratings against 2/);
  });
});

describe("Fleiss' kappa, against hand-computed values", () => {
  it('10 episodes, 5 reviewers (the Wikipedia layout with two categories)', () => {
    // passes per episode (of 5): 5 5 4 0 0 1 3 2 5 0. P_i = (yes² + no² - 5) / (5*4):
    // (5,0) (0,5): 20/20 = 1; (4,1) (1,4): 12/20 = .6; (3,2) (2,3): 8/20 = .4
    // P-bar = (1+1+.6+1+1+.6+.4+.4+1+1) / 10 = .8; pass share 25/50 = .5: P_e = .25 + .25 = .5; kappa = (.8 - .5) / .5 = .6
    const passes = [5, 5, 4, 0, 0, 1, 3, 2, 5, 0];
    const r = fleissKappa(passes.map((y) => [...Array(5).keys()].map((k) => k < y)));
    assert.deepEqual([r.n, r.raters], [10, 5]);
    close(r.kappa, 0.6);
  });

  it('unequal pass share, and the undefined cases', () => {
    // 3 reviewers, passes 3 2 3 1: P_i = 1, 1/3, 1, 1/3 (P_i = (y² + n² - 3) / 6): P-bar = 2/3
    // pass share 9/12 = .75: P_e = .5625 + .0625 = .625; kappa = (2/3 - 5/8) / (3/8) = (1/24) / (3/8) = 1/9
    const r = fleissKappa([3, 2, 3, 1].map((y) => [0, 1, 2].map((k) => k < y)));
    close(r.kappa, 1 / 9);
    assert.deepEqual(fleissKappa([]), { n: 0, raters: 0, kappa: null });
    assert.equal(fleissKappa([[T], [F]]).kappa, null, 'one rater');
    assert.equal(
      fleissKappa([
        [T, T, T],
        [T, T, T],
      ]).kappa,
      1,
      'every rating the same: 1, as for Cohen',
    );
    assert.throws(() => fleissKappa([[T, T], [T]]), /same number of ratings/);
  });
});
