import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import {
  createServer as createHttpServer,
  type Server as HttpServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from "node:http";
import { request as httpsRequest } from "node:https";
import {
  type AddressInfo,
  createConnection,
  createServer,
  type Server,
  type Socket,
} from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputError } from "../../core/errors.js";

/**
 * Loopback-only network for a sandbox without a network namespace escape: the sandbox keeps its
 * own empty network namespace (nothing outside is reachable), and each allowed host port is
 * carried over a Unix socket that is bind-mounted in. Inside, a tiny forwarder listens on
 * 127.0.0.1:<port> and pipes each connection to the socket; outside, a server on the socket
 * pipes it on to the host's 127.0.0.1:<port>. Only the listed ports cross the boundary.
 */

/** Where the socket folder appears inside the sandbox. */
export const LOOPBACK_SOCKET_DIRECTORY = "/run/skillsmith-loopback";

export interface LoopbackBridge {
  /** Host folder holding one socket per port, named `<port>.sock`. */
  readonly directory: string;
  close(): Promise<void>;
}

export async function startLoopbackBridge(ports: readonly number[]): Promise<LoopbackBridge> {
  for (const port of ports) {
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      throw new RangeError(`loopback port ${port} is not an integer in 1..65535`);
    }
  }
  const directory = await mkdtemp(join(tmpdir(), "skillsmith-loopback-"));
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  try {
    for (const port of ports) {
      const server = createServer((inside) => {
        const outside = createConnection({ host: "127.0.0.1", port });
        sockets.add(inside);
        sockets.add(outside);
        pipeBoth(inside, outside, () => {
          sockets.delete(inside);
          sockets.delete(outside);
        });
      });
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(join(directory, `${port}.sock`), () => resolve());
      });
      servers.push(server);
    }
  } catch (error) {
    await closeAll(servers, sockets, directory);
    throw error;
  }
  return { directory, close: () => closeAll(servers, sockets, directory) };
}

function pipeBoth(left: Socket, right: Socket, done: () => void): void {
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    left.destroy();
    right.destroy();
    done();
  };
  left.on("error", finish);
  right.on("error", finish);
  left.on("close", finish);
  right.on("close", finish);
  left.pipe(right);
  right.pipe(left);
}

async function closeAll(servers: Server[], sockets: Set<Socket>, directory: string): Promise<void> {
  for (const socket of sockets) socket.destroy();
  await Promise.all(
    servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
  );
  await rm(directory, { recursive: true, force: true });
}

/**
 * The forwarder that runs inside the sandbox with `node -e`. argv after the script: the socket
 * folder, the comma-separated ports, then the real command. It listens first, then runs the
 * command with inherited stdio and exits with its status (128 + signal number when signalled,
 * as a shell would), so callers see the command's own result.
 */
export const INSIDE_FORWARDER_SCRIPT = `
const net = require("node:net");
const { spawn } = require("node:child_process");
const os = require("node:os");
const [directory, portList, ...command] = process.argv.slice(1);
const ports = portList.split(",").filter((p) => p !== "").map(Number);
let pending = ports.length;
const servers = [];
const start = () => {
  const child = spawn(command[0], command.slice(1), { stdio: "inherit" });
  child.on("error", (error) => { process.stderr.write(String(error.message) + "\\n"); process.exit(127); });
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => {
    for (const server of servers) server.close();
    process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0));
  });
};
if (pending === 0) start();
for (const port of ports) {
  const server = net.createServer((inside) => {
    const outside = net.createConnection(directory + "/" + port + ".sock");
    const end = () => { inside.destroy(); outside.destroy(); };
    inside.on("error", end); outside.on("error", end); inside.on("close", end); outside.on("close", end);
    inside.pipe(outside); outside.pipe(inside);
  });
  server.on("error", (error) => { process.stderr.write("loopback forwarder: " + error.message + "\\n"); process.exit(125); });
  server.listen(port, "127.0.0.1", () => { pending -= 1; if (pending === 0) start(); });
  servers.push(server);
}
`;

/**
 * The command that runs `command` behind the loopback forwarder: `node` (the host's node for
 * bubblewrap, the image's for containers) runs `INSIDE_FORWARDER_SCRIPT` on the bridge's
 * sockets for `ports`, then the command itself.
 */
export function behindForwarder(
  node: string,
  ports: readonly number[],
  command: readonly string[],
): string[] {
  return [
    node,
    "-e",
    INSIDE_FORWARDER_SCRIPT,
    LOOPBACK_SOCKET_DIRECTORY,
    ports.join(","),
    ...command,
  ];
}

/**
 * An HTTP forwarder on the host's loopback that holds a model endpoint's real key, so the key
 * never enters a sandbox. The agent is given `url` and `dummyKey`; each request must carry the
 * dummy key (as `x-api-key` or `Authorization: Bearer`, the Anthropic and OpenAI spellings), which
 * is replaced with the real one before the request goes on to the upstream endpoint (http or
 * https). A request without the dummy key is refused, so the forwarder is no open door for other
 * processes on this machine. Streaming responses (SSE) pass through as they arrive.
 */
export interface CredentialProxy {
  /** Host port on 127.0.0.1, to list in `loopbackPorts`. */
  readonly port: number;
  /** The endpoint as the agent must call it: this forwarder, with the upstream's path. */
  readonly url: string;
  /** The per-run key the agent sends; worthless anywhere but here. */
  readonly dummyKey: string;
  close(): Promise<void>;
}

export interface CredentialProxyOptions {
  /** The real endpoint's base URL (`https://api.anthropic.com`, `http://127.0.0.1:4000/v1`). */
  readonly upstream: string;
  /** The real key; without one, the dummy is removed and nothing is added. */
  readonly apiKey?: string;
}

/** Hop-by-hop headers are the connection's own and never forwarded (RFC 9110, 7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

/**
 * The model API paths an agent harness calls (after the upstream's own path, with or without a
 * `/v1` prefix): Anthropic Messages (and its token counter), OpenAI Responses and Chat
 * Completions, and the model list. Nothing else is forwarded with the real key: the key stays
 * useful to the agent only for talking to the model, not for the provider's other APIs (files,
 * batches, organisation and key administration, fine-tuning) or an upstream's other routes.
 */
const MODEL_API_PATHS: readonly { readonly method: string; readonly path: RegExp }[] = [
  { method: "POST", path: /^\/messages$/ },
  { method: "POST", path: /^\/messages\/count_tokens$/ },
  { method: "POST", path: /^\/responses$/ },
  { method: "POST", path: /^\/chat\/completions$/ },
  { method: "GET", path: /^\/models$/ },
  { method: "GET", path: /^\/models\/[A-Za-z0-9._:-]+$/ },
];

/** Whether a request (method, path with query) is a model API call the forwarder passes on. */
export function isModelApiRequest(
  method: string | undefined,
  url: string | undefined,
  basePath: string,
): boolean {
  if (method === undefined || url === undefined) return false;
  const pathOnly = url.split("?")[0] ?? "";
  // Encoded or dot segments could be normalised upstream into a path this check never saw.
  if (pathOnly.includes("%") || pathOnly.includes("//") || /(^|\/)\.\.?(\/|$)/.test(pathOnly)) {
    return false;
  }
  if (!pathOnly.startsWith(`${basePath}/`)) return false;
  const rest = pathOnly.slice(basePath.length).replace(/^\/v1(?=\/)/, "");
  return MODEL_API_PATHS.some((allowed) => allowed.method === method && allowed.path.test(rest));
}

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) kept[name] = value;
  }
  return kept;
}

export async function startCredentialProxy(
  options: CredentialProxyOptions,
): Promise<CredentialProxy> {
  // `URL.canParse` first: the constructor's TypeError would reach the user as a stack trace.
  const upstream = URL.canParse(options.upstream) ? new URL(options.upstream) : undefined;
  if (upstream?.protocol !== "http:" && upstream?.protocol !== "https:") {
    throw new InputError(
      "env.model-base-url-invalid",
      `model endpoint ${JSON.stringify(options.upstream)} is not an http(s) URL`,
      { field: "baseUrl" },
    );
  }
  const dummyKey = `skillsmith-run-${randomBytes(16).toString("hex")}`;
  const send = upstream.protocol === "https:" ? httpsRequest : httpRequest;
  const basePath = upstream.pathname.replace(/\/+$/, "");
  const server: HttpServer = createHttpServer((incoming, outgoing) => {
    const apiKeyHeader = incoming.headers["x-api-key"];
    const authorization = incoming.headers.authorization;
    const carriesDummy = apiKeyHeader === dummyKey || authorization === `Bearer ${dummyKey}`;
    if (!carriesDummy) {
      incoming.resume();
      outgoing.writeHead(401, { "content-type": "application/json" });
      outgoing.end(
        JSON.stringify({
          type: "error",
          error: { type: "authentication_error", message: "skillsmith model bridge: unknown key" },
        }),
      );
      return;
    }
    if (!isModelApiRequest(incoming.method, incoming.url, basePath)) {
      incoming.resume();
      outgoing.writeHead(403, { "content-type": "application/json" });
      outgoing.end(
        JSON.stringify({
          type: "error",
          error: {
            type: "permission_error",
            message: `skillsmith model bridge: ${incoming.method} ${incoming.url?.split("?")[0]} is not a model API path`,
          },
        }),
      );
      return;
    }
    const headers = forwardable(incoming.headers);
    delete headers["x-api-key"];
    delete headers.authorization;
    if (options.apiKey !== undefined) {
      if (apiKeyHeader !== undefined) headers["x-api-key"] = options.apiKey;
      if (authorization !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
    }
    const forwarded = send(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname.replace(/^\[|\]$/g, ""),
        port: upstream.port === "" ? undefined : Number(upstream.port),
        method: incoming.method,
        path: incoming.url,
        headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, forwardable(answer.headers));
        answer.pipe(outgoing);
        answer.on("error", () => outgoing.destroy());
      },
    );
    forwarded.on("error", (error) => {
      if (outgoing.headersSent) {
        outgoing.destroy();
        return;
      }
      outgoing.writeHead(502, { "content-type": "application/json" });
      outgoing.end(
        JSON.stringify({
          type: "error",
          error: { type: "api_error", message: `model endpoint unreachable: ${error.message}` },
        }),
      );
    });
    incoming.pipe(forwarded);
    outgoing.on("close", () => forwarded.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}${basePath}`,
    dummyKey,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
