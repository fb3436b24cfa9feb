/**
 * The answer to a callback-style request (an ssh2 exec, SFTP or forward request) within `ms`: past that the promise
 * fails with `timeout()`, and an answer that still comes is handed to `discard` (a late channel is closed, not leaked).
 */
export function answerWithin<T>(
  ms: number,
  request: (cb: (err: Error | undefined, value: T) => void) => void,
  discard: (late: T) => void,
  timeout: () => Error,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(timeout());
    }, ms);
    request((err, value) => {
      if (late) return void (err ? undefined : discard(value));
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(value);
    });
  });
}
