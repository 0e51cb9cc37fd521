/**
 * Real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core) for the report
 * tests, with every request the test does not allow aborted and noted. The launching code is the
 * library's (`src/env/browser.ts`), which the wiki's render gate uses too.
 */
import type { BrowserContext, Page } from "playwright-core";
import { findChromium, launchOfflineChromium as launch } from "../../src/env/browser.js";

export const CHROMIUM = findChromium() ?? "/usr/bin/chromium";
export const hasChromium = findChromium() !== undefined;

/**
 * A persistent headless context under `profileDirectory` (1280×900). A request whose URL
 * `allowed` refuses is aborted and its URL pushed to `blocked`; uncaught page errors go to
 * `pageErrors`, so tests can assert both stay empty.
 */
export function launchOfflineChromium(options: {
  profileDirectory: string;
  allowed: (url: URL) => boolean;
  blocked: string[];
  pageErrors: string[];
}): Promise<{ context: BrowserContext; page: Page }> {
  return launch({ ...options, executablePath: CHROMIUM });
}
