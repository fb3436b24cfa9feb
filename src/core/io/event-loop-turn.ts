/*
 * Long reads that share the event loop take turns: each caller waits here between pieces of its work, and each turn of
 * the loop resumes one of them, in the order they asked. Between two pieces the loop then handles its messages and I/O.
 * A plain `setImmediate` per piece would resume every waiting reader in the same turn: with ten big logs read side by
 * side, one turn parsed a chunk of each (100-280 ms), and a message from the dashboard's page needed several turns.
 */
const waiting: (() => void)[] = [];

/** Resolves on a later turn of the event loop, after every caller that asked before. */
export function eventLoopTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (waiting.length === 1) setImmediate(resumeNext);
  });
}

function resumeNext(): void {
  waiting.shift()!();
  // Queued from inside the check phase, so it runs on the loop's next turn, after its I/O.
  if (waiting.length) setImmediate(resumeNext);
}
