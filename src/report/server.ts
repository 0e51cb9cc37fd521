/**
 * The local dashboard (`skillsmith view`): the HTML report and the trajectory viewer of one run
 * directory, served live from its SQLite store (opened read-only per request, so a run writing
 * to the store in WAL mode is never blocked and every page reflects what is committed).
 *
 * Loopback only by default. Bound anywhere else, every request needs the access token: as a
 * bearer header, as an HttpOnly cookie, or once as `?token=` (answered with the cookie and a
 * redirect to the same page without the token, so it leaves the address bar and history).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { reportRunDir } from "../bench/analysis/load.js";
import type { BenchReport } from "../bench/analysis/report.js";
import { RESULTS_FILE } from "../bench/store/results.js";
import { InfrastructureError, UsageError } from "../core/errors.js";
import { isMissing, unreadableError } from "../core/fs.js";
import { browserScript } from "./browser-code.js";
import { documentHead, escapeHtml, renderHtmlReport } from "./html.js";
import { loadPairView, parsePairPath } from "./pairs.js";

export const DEFAULT_DASHBOARD_HOST = "127.0.0.1";

export interface DashboardOptions {
  readonly runDir: string;
  /** Default 127.0.0.1. Anything but loopback requires `token`. */
  readonly host?: string;
  /** Default 0: a free port. */
  readonly port?: number;
  /** Required for a non-loopback host; optional (but enforced when given) on loopback. */
  readonly token?: string;
}

export interface Dashboard {
  /** The address of the report page (without the token). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(["127.0.0.1", "::1", "localhost"]);

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  return LOOPBACK_NAMES.has(bare.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/** A fresh access token: 32 random bytes, URL-safe. */
export function generateAccessToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Compares digests so the time taken does not reveal how much of a guess was right. */
function sameToken(given: string, expected: string): boolean {
  const left = createHash("sha256").update(given).digest();
  const right = createHash("sha256").update(expected).digest();
  return timingSafeEqual(left, right);
}

/**
 * A cheap fingerprint of the store: size and modification time of the database, its WAL and the
 * manifest. A checkpoint may change it without new results; that costs one needless refresh.
 */
function storeVersion(runDir: string): string {
  return [RESULTS_FILE, `${RESULTS_FILE}-wal`, "manifest.json"]
    .map((name) => {
      try {
        const info = statSync(join(runDir, name), { bigint: true });
        return `${info.size}.${info.mtimeNs}`;
      } catch {
        // Only a fingerprint (the WAL comes and goes): any change of it just triggers a reload,
        // and the reload itself reports a store it cannot read.
        return "-";
      }
    })
    .join(":");
}

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  // Vega compiles its expressions with Function (unsafe-eval); every script is our own inline
  // one. Nothing may be loaded from elsewhere, so injected markup could not call out.
  "content-security-policy":
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

function send(
  response: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    "content-type": `${type}; charset=utf-8`,
    "content-length": String(Buffer.byteLength(body)),
    ...headers,
  });
  response.end(response.req.method === "HEAD" ? undefined : body);
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, "application/json", JSON.stringify(value));
}

function cookieValue(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return rest.join("=");
  }
  return undefined;
}

function pageShell(title: string, body: string, script: string): string {
  return `${documentHead(title)}<body>
${body}
<script>${script}</script>
</body>
</html>
`;
}

/** Shown until the run has written its store; reloads as soon as it exists. */
function waitingPage(runDir: string): string {
  return pageShell(
    "Waiting for results",
    `<main data-waiting="true"><h1>Waiting for results</h1><p data-testid="waiting">No results in ${escapeHtml(runDir)} yet. This page reloads when the run stores its first result.</p></main>`,
    browserScript("waiting"),
  );
}

function pairPage(path: string): string {
  const ref = parsePairPath(path);
  const config = JSON.stringify({
    id: path,
    api: `/api/pair/${path}`,
    stateUrl: "/api/state",
    back: "/#profiles",
  }).replaceAll("<", "\\u003c");
  return pageShell(
    ref === undefined ? "Trajectories" : `Trajectories: ${ref.skill} · ${ref.requirement}`,
    `<div id="pair-viewer" class="viewer"></div>
<script type="application/json" id="pair-config">${config}</script>
<script>${browserScript("viewer")}</script>`,
    browserScript("pair-page"),
  );
}

interface Snapshot {
  readonly version: string;
  readonly report?: BenchReport;
  readonly html?: string;
}

/** The run directory, the token and the host, checked before anything listens. */
function checkDashboardOptions(runDir: string, host: string, token: string | undefined): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(runDir).isDirectory();
  } catch (error) {
    // Missing is the usage mistake below; there but unreadable is its own error naming it.
    if (!isMissing(error)) throw unreadableError(runDir, error);
  }
  if (!isDirectory) {
    throw new UsageError(
      "report.view-no-run-dir",
      `${runDir} is not a directory; give the run directory of \`skillsmith bench run --out <dir>\``,
    );
  }
  if (token !== undefined && !/^[A-Za-z0-9_-]{16,}$/.test(token)) {
    throw new UsageError(
      "report.view-token",
      "the access token must be at least 16 characters of A-Z, a-z, 0-9, _ and - (it goes into a cookie)",
    );
  }
  if (!isLoopbackHost(host) && token === undefined) {
    throw new UsageError(
      "report.view-token-required",
      `binding the dashboard to ${host} (not loopback) requires an access token`,
    );
  }
}

/** Listen on `bindHost:port`; a port taken or refused is the user's to change. */
async function listen(server: Server, host: string, bindHost: string, port: number): Promise<void> {
  await new Promise<void>((resolveListen, rejectListen) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      rejectListen(
        error.code === "EADDRINUSE" || error.code === "EACCES" || error.code === "EADDRNOTAVAIL"
          ? new UsageError(
              "report.view-listen",
              `cannot listen on ${host}:${port} (${error.code}); choose another --port or --host`,
              { cause: error },
            )
          : new InfrastructureError("report.view-listen", `cannot listen on ${host}`, {
              cause: error,
            }),
      ),
    );
    server.listen(port, bindHost, () => resolveListen());
  });
}

/** Starts the dashboard; resolves once it listens. */
export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const runDir = resolve(options.runDir);
  const host = options.host ?? DEFAULT_DASHBOARD_HOST;
  const token = options.token;
  checkDashboardOptions(runDir, host, token);
  const loopback = isLoopbackHost(host);
  const bindHost = host.replace(/^\[(.*)\]$/, "$1");
  let cookieName = "skillsmith_dashboard";
  let snapshot: Snapshot | undefined;

  async function current(): Promise<Snapshot> {
    const version = storeVersion(runDir);
    if (snapshot !== undefined && snapshot.version === version) return snapshot;
    let next: Snapshot;
    try {
      statSync(join(runDir, RESULTS_FILE));
      const report = await reportRunDir(runDir);
      next = { version, report };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") next = { version };
      else throw error;
    }
    snapshot = next;
    return next;
  }

  async function reportPage(): Promise<string> {
    const state = await current();
    if (state.report === undefined) return waitingPage(runDir);
    if (state.html === undefined) {
      const html = renderHtmlReport(state.report, {
        source: runDir,
        live: { stateUrl: "/api/state", version: state.version },
      });
      snapshot = { ...state, html };
      return html;
    }
    return state.html;
  }

  /** Returns true when the request may go on; otherwise the response has been sent. */
  function admit(request: IncomingMessage, response: ServerResponse, url: URL): boolean {
    if (loopback) {
      // Guards against DNS rebinding: a page on another site resolving its own name to 127.0.0.1.
      const hostHeader = (request.headers.host ?? "").replace(/:\d+$/, "");
      if (!isLoopbackHost(hostHeader)) {
        send(response, 403, "text/plain", "forbidden: unexpected Host header\n");
        return false;
      }
    }
    if (token === undefined) return true;
    const authorization = request.headers.authorization;
    if (authorization?.startsWith("Bearer ") && sameToken(authorization.slice(7), token))
      return true;
    const cookie = cookieValue(request, cookieName);
    if (cookie !== undefined && sameToken(cookie, token)) return true;
    const query = url.searchParams.get("token");
    if (query !== null && sameToken(query, token)) {
      url.searchParams.delete("token");
      send(response, 303, "text/plain", "authorised\n", {
        location: `${url.pathname}${url.search}`,
        "set-cookie": `${cookieName}=${token}; HttpOnly; SameSite=Strict; Path=/`,
      });
      return false;
    }
    send(response, 401, "text/plain", "unauthorised: open the URL with the access token\n", {
      "www-authenticate": 'Bearer realm="skillsmith dashboard"',
    });
    return false;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://dashboard.invalid");
    if (!admit(request, response, url)) return;
    if (request.method !== "GET" && request.method !== "HEAD") {
      send(response, 405, "text/plain", "method not allowed\n", { allow: "GET, HEAD" });
      return;
    }
    const path = url.pathname;
    if (path === "/" || path === "/index.html") {
      send(response, 200, "text/html", await reportPage());
      return;
    }
    if (path === "/api/state") {
      const state = await current();
      sendJson(response, 200, {
        version: state.version,
        scored: state.report?.runs.scored ?? 0,
        infraAttempts: state.report?.runs.infraAttempts ?? 0,
      });
      return;
    }
    if (path === "/api/report") {
      const state = await current();
      if (state.report === undefined) sendJson(response, 404, { error: "no results yet" });
      else sendJson(response, 200, { version: state.version, report: state.report });
      return;
    }
    if (path.startsWith("/pair/")) {
      const pairId = path.slice("/pair/".length);
      if (parsePairPath(pairId) === undefined) {
        send(response, 404, "text/plain", "not a pair path\n");
        return;
      }
      send(response, 200, "text/html", pairPage(pairId));
      return;
    }
    if (path.startsWith("/api/pair/")) {
      const ref = parsePairPath(path.slice("/api/pair/".length));
      const state = await current();
      const pair =
        ref === undefined || state.report === undefined ? undefined : loadPairView(runDir, ref);
      if (pair === undefined) sendJson(response, 404, { error: "no such pair" });
      else sendJson(response, 200, { version: state.version, pair });
      return;
    }
    send(response, 404, "text/plain", "not found\n");
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (!response.headersSent) send(response, 500, "text/plain", `error: ${message}\n`);
      else response.destroy();
    });
  });
  await listen(server, host, bindHost, options.port ?? 0);
  const address = server.address() as AddressInfo;
  // Cookies are not scoped by port: two dashboards on one host must not share a cookie name.
  cookieName = `skillsmith_dashboard_${address.port}`;
  const url = `http://${bindHost.includes(":") ? `[${bindHost}]` : bindHost}:${address.port}/`;
  return {
    url,
    host,
    port: address.port,
    close: () =>
      new Promise<void>((resolveClose, rejectClose) => {
        server.close((error) => (error === undefined ? resolveClose() : rejectClose(error)));
        // Browsers keep connections alive; close them so shutdown does not wait for a timeout.
        server.closeAllConnections();
      }),
  };
}
