/**
 * Headless Chromium driven by playwright-core: Debian's `chromium` (apt), never a browser
 * downloaded by Playwright. One launching path for the report tests and the wiki's render gate,
 * with the launch flags known to work on the build machines.
 *
 * "Offline" means every request a caller does not allow is aborted before it leaves the
 * browser (and recorded), WebSockets are answered by a route that never connects, and, for
 * untrusted pages, the browser is given a proxy that does not exist, so a request that escaped
 * the routes could still reach nothing.
 */
import { existsSync } from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { InfrastructureError } from "../core/errors.js";
import { importOptional } from "../core/optional.js";

/** Overrides where Chromium is looked for (an absolute path to the binary). */
export const CHROMIUM_VARIABLE = "SKILLSMITH_CHROMIUM";

/** Where Debian and other distributions install Chromium, tried in order. */
export const CHROMIUM_CANDIDATES = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
] as const;

/** The flags that work on the build machines (shared/machine-notes.md). */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
] as const;

/**
 * Extra flags for pages that must not reach any network: every request goes to a proxy on a
 * port nothing listens on (loopback included, which Chromium otherwise bypasses), DNS resolves
 * nothing, and WebRTC may not send UDP outside the (dead) proxy.
 */
export const NO_NETWORK_ARGS = [
  "--proxy-server=http://127.0.0.1:9",
  "--proxy-bypass-list=<-loopback>",
  "--host-resolver-rules=MAP * ~NOTFOUND",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--disable-features=WebRtcHideLocalIpsWithMdns",
] as const;

/**
 * The Chromium binary: `SKILLSMITH_CHROMIUM` when set (it must exist), else the first of
 * `CHROMIUM_CANDIDATES` that exists; undefined when there is none.
 */
export function findChromium(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  const configured = env[CHROMIUM_VARIABLE];
  if (configured !== undefined && configured !== "")
    return existsSync(configured) ? configured : undefined;
  return CHROMIUM_CANDIDATES.find((candidate) => existsSync(candidate));
}

type Chromium = typeof import("playwright-core").chromium;

/** playwright-core, loaded on first use so commands that never render do not pay for it. */
export async function loadChromiumDriver(): Promise<Chromium> {
  const driver = await importOptional<typeof import("playwright-core")>(
    "playwright-core",
    "the Chromium driver (rendering pages, the report's browser checks)",
  );
  return driver.chromium;
}

export interface RequestFilter {
  /** Requests for which this is false are aborted and passed to `onBlocked`. */
  readonly allowed: (url: URL) => boolean;
  readonly onBlocked?: (url: string) => void;
}

/** Route every request and WebSocket of `context` through `filter`. */
export async function blockRequests(context: BrowserContext, filter: RequestFilter): Promise<void> {
  await context.route("**/*", async (route) => {
    const url = new URL(route.request().url());
    if (filter.allowed(url)) await route.fallback();
    else {
      filter.onBlocked?.(url.href);
      await route.abort("blockedbyclient");
    }
  });
  // WebSockets bypass request routes; a routed socket that never calls connectToServer()
  // talks to nobody.
  await context.routeWebSocket(
    () => true,
    (socket) => {
      if (filter.allowed(new URL(socket.url()))) {
        socket.connectToServer();
        return;
      }
      filter.onBlocked?.(socket.url());
      void socket.close({ code: 1008, reason: "network blocked" }).catch(() => {});
    },
  );
}

/**
 * A headless browser for untrusted pages: the no-network flags, and with `memoryBytes` a cap on
 * each page's JavaScript heap (a page over it crashes instead of exhausting the machine).
 */
export async function launchIsolatedChromium(options: {
  readonly executablePath: string;
  readonly timeoutMs?: number;
  readonly memoryBytes?: number;
}): Promise<Browser> {
  const chromium = await loadChromiumDriver();
  const heap =
    options.memoryBytes === undefined
      ? []
      : [
          `--js-flags=--max-old-space-size=${Math.max(16, Math.floor(options.memoryBytes / 2 ** 20))}`,
        ];
  try {
    return await chromium.launch({
      executablePath: options.executablePath,
      headless: true,
      args: [...CHROMIUM_ARGS, ...NO_NETWORK_ARGS, ...heap],
      timeout: options.timeoutMs ?? 30_000,
    });
  } catch (cause) {
    throw new InfrastructureError(
      "env.browser-launch",
      `Chromium (${options.executablePath}) did not start: ${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)}`,
      { cause, retryable: true },
    );
  }
}

/**
 * A persistent headless context under `profileDirectory` (1280×900 unless given). A request
 * whose URL `allowed` refuses is aborted and its URL pushed to `blocked`; uncaught page errors
 * go to `pageErrors`, so callers can assert both stay empty.
 */
export async function launchOfflineChromium(options: {
  readonly executablePath: string;
  readonly profileDirectory: string;
  readonly allowed: (url: URL) => boolean;
  readonly blocked: string[];
  readonly pageErrors: string[];
  readonly viewport?: { width: number; height: number };
}): Promise<{ context: BrowserContext; page: Page }> {
  const chromium = await loadChromiumDriver();
  const context = await chromium.launchPersistentContext(options.profileDirectory, {
    executablePath: options.executablePath,
    headless: true,
    args: [...CHROMIUM_ARGS],
    viewport: options.viewport ?? { width: 1280, height: 900 },
  });
  await blockRequests(context, {
    allowed: options.allowed,
    onBlocked: (url) => options.blocked.push(url),
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("pageerror", (error) => options.pageErrors.push(error.message));
  return { context, page };
}
