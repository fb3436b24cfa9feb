/**
 * Where a row is, as a person counts: rows and lines both from 1 ("row 3 (line 4)"; "row 3" for parquet, which has
 * no lines). `row` is the 0-based index the code keeps (previews and "go to row" use it).
 */
export function rowAndLine(at: { row?: number; line?: number }): string {
  if (at.row === undefined) return at.line !== undefined ? `line ${at.line}` : '';
  return at.line !== undefined ? `row ${at.row + 1} (line ${at.line})` : `row ${at.row + 1}`;
}
