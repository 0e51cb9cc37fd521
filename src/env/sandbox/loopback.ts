import { mkdtemp, rm } from "node:fs/promises";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

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
