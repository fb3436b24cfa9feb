import type { Frame, Page } from 'playwright-core';

/** The reward playground's page: the webview frame that holds the results table. */
export async function playgroundFrame(page: Page): Promise<Frame> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    for (const f of page.frames()) {
      if (
        await f
          .locator('#results')
          .count()
          .catch(() => 0)
      )
        return f;
    }
    if (Date.now() > deadline) throw new Error('the reward playground webview did not appear');
    await page.waitForTimeout(250);
  }
}
