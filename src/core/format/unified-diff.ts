/** Past this many line pairs (after the common start and end are set aside) the middle is shown as removed then added. */
const MAX_CELLS = 25_000_000;

function lines(text: string): string[] {
  const out = text.split('\n');
  if (out[out.length - 1] === '') out.pop();
  return out;
}

type Op = [' ' | '-' | '+', string];

/** A shortest edit of a into b, by longest common subsequence over the part between their common start and end. */
function edit(a: string[], b: string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  const x = a.slice(start, a.length - end);
  const y = b.slice(start, b.length - end);
  const middle: Op[] = [];
  if (x.length * y.length > MAX_CELLS) {
    middle.push(...x.map((l): Op => ['-', l]), ...y.map((l): Op => ['+', l]));
  } else {
    // lcs[i][j]: the longest common subsequence of x[i..] and y[j..], in one flat array.
    const w = y.length + 1;
    const lcs = new Uint32Array((x.length + 1) * w);
    for (let i = x.length - 1; i >= 0; i--)
      for (let j = y.length - 1; j >= 0; j--)
        lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
    let i = 0;
    let j = 0;
    while (i < x.length || j < y.length) {
      if (i < x.length && j < y.length && x[i] === y[j]) {
        middle.push([' ', x[i++]!]);
        j++;
      } else if (i < x.length && (j === y.length || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) middle.push(['-', x[i++]!]);
      else middle.push(['+', y[j++]!]);
    }
  }
  return [...a.slice(0, start).map((l): Op => [' ', l]), ...middle, ...a.slice(a.length - end).map((l): Op => [' ', l])];
}

/**
 * A unified diff of two texts (as `diff -u` prints it, 3 lines of context), headed `--- aName` / `+++ bName`;
 * empty when their lines are the same.
 */
export function unifiedDiff(aText: string, bText: string, aName: string, bName: string, context = 3): string {
  const ops = edit(lines(aText), lines(bText));
  const changed = ops.map((o, k) => (o[0] !== ' ' ? k : -1)).filter((k) => k >= 0);
  if (!changed.length) return '';
  const out = [`--- ${aName}`, `+++ ${bName}`];
  // Hunks: runs of changes whose context would touch, each with `context` unchanged lines around.
  let k = 0;
  while (k < changed.length) {
    let last = k;
    while (last + 1 < changed.length && changed[last + 1]! - changed[last]! <= 2 * context) last++;
    const from = Math.max(0, changed[k]! - context);
    const to = Math.min(ops.length, changed[last]! + context + 1);
    // Line numbers where the hunk starts: the lines of each side before it, plus one.
    const aBefore = ops.slice(0, from).filter((o) => o[0] !== '+').length;
    const bBefore = ops.slice(0, from).filter((o) => o[0] !== '-').length;
    const hunk = ops.slice(from, to);
    const aLen = hunk.filter((o) => o[0] !== '+').length;
    const bLen = hunk.filter((o) => o[0] !== '-').length;
    out.push(`@@ -${aLen ? aBefore + 1 : aBefore},${aLen} +${bLen ? bBefore + 1 : bBefore},${bLen} @@`, ...hunk.map(([t, l]) => t + l));
    k = last + 1;
  }
  return `${out.join('\n')}\n`;
}
