/**
 * A throwaway `redis-server` for queue tests and benchmarks: on a free port of 127.0.0.1,
 * nothing persisted, its working files in a folder the caller removes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { exitOf, waitFor } from "./processes.js";

/** A TCP port of 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolvePort(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

/** One PING over a raw socket: true on +PONG, undefined while the server is not up. */
export function ping(port: number): Promise<true | undefined> {
  return new Promise((resolvePing) => {
    const socket = connect({ host: "127.0.0.1", port });
    let reply = "";
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) {
        socket.destroy();
        resolvePing(reply.startsWith("+PONG") ? true : undefined);
      }
    });
    socket.on("error", () => resolvePing(undefined));
  });
}

export interface RedisServer {
  readonly port: number;
  readonly child: ChildProcess;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

/**
 * Start `redis-server` on a free port with `directory` as its working folder, and wait until
 * it answers PING (a server that never does is killed before the error is thrown).
 */
export async function startRedisServer(
  directory: string,
  timeoutMs = 90_000,
): Promise<RedisServer> {
  const port = await freePort();
  const child = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      directory,
    ],
    { stdio: "ignore" },
  );
  const stop = async () => {
    child.kill("SIGTERM");
    await exitOf(child);
  };
  try {
    await waitFor("redis-server to answer PING", () => ping(port), timeoutMs);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, child, stop };
}
