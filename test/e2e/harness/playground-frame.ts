import type { Frame, Page } from 'playwright-core';

/** The webview page (a frame) that holds an element matching `selector`: code-server nests each webview in two iframes. */
export async function webviewWith(page: Page, selector: string, what: string): Promise<Frame> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    for (const f of page.frames()) {
      if (
        await f
          .locator(selector)
          .count()
          .catch(() => 0)
      )
        return f;
    }
    if (Date.now() > deadline) throw new Error(`the ${what} webview did not appear`);
    await page.waitForTimeout(250);
  }
}

/** The reward playground's page: the webview frame that holds the results table. */
export function playgroundFrame(page: Page): Promise<Frame> {
  return webviewWith(page, '#results', 'reward playground');
}
