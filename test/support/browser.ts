/**
 * Real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core) for the report
 * tests, with every request the test does not allow aborted and noted.
 */
import { existsSync } from "node:fs";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);

/**
 * A persistent headless context under `profileDirectory` (1280×900). A request whose URL
 * `allowed` refuses is aborted and its URL pushed to `blocked`; uncaught page errors go to
 * `pageErrors`, so tests can assert both stay empty.
 */
export async function launchOfflineChromium(options: {
  profileDirectory: string;
  allowed: (url: URL) => boolean;
  blocked: string[];
  pageErrors: string[];
}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(options.profileDirectory, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
    viewport: { width: 1280, height: 900 },
  });
  await context.route("**/*", async (route) => {
    const url = new URL(route.request().url());
    if (options.allowed(url)) await route.continue();
    else {
      options.blocked.push(url.href);
      await route.abort();
    }
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (error) => options.pageErrors.push(error.message));
  return { context, page };
}
