import { createHmac } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CHANNEL_PROTOCOL, ChannelServer } from "./channel.js";

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

async function server(): Promise<ChannelServer> {
  const folder = await mkdtemp(join(tmpdir(), "channel-test-"));
  folders.push(folder);
  return ChannelServer.listen(join(folder, "channel.sock"), {
    mode: "run",
    canaries: ["t.py::test_c"],
  });
}

/** A client playing the plugin: connects, reads the hello, returns the socket and the key. */
async function connect(path: string): Promise<{ socket: Socket; hello: Record<string, unknown> }> {
  const socket = createConnection(path);
  socket.setEncoding("utf8");
  const line = await new Promise<string>((resolve, reject) => {
    let received = "";
    socket.on("error", reject);
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (received.includes("\n")) resolve(received.slice(0, received.indexOf("\n")));
    });
  });
  return { socket, hello: JSON.parse(line) as Record<string, unknown> };
}

function signed(key: string, record: Record<string, unknown>): string {
  const body = JSON.stringify(record);
  return `${createHmac("sha256", Buffer.from(key, "hex")).update(body).digest("hex")} ${body}\n`;
}

const start = { type: "start", mode: "run", pid: 1, python: "3.11", pytest: "7.2", rootdir: "/v" };
const finish = {
  type: "finish",
  exitstatus: 1,
  testsfailed: 1,
  testscollected: 1,
  shouldstop: null,
  shouldfail: null,
  maxfail: 0,
  replaced: [],
  unfinished: [],
};

async function end(socket: Socket, text: string): Promise<void> {
  await new Promise<void>((resolve) => socket.end(text, () => resolve()));
}

describe("ChannelServer", () => {
  it("hands the one client a key and the canaries, then accepts its signed, sequenced records", async () => {
    const channel = await server();
    const { socket, hello } = await connect(channel.socketPath);
    expect(hello).toMatchObject({
      protocol: CHANNEL_PROTOCOL,
      mode: "run",
      canaries: ["t.py::test_c"],
    });
    expect(hello.key).toMatch(/^[0-9a-f]{64}$/);
    const key = hello.key as string;
    await end(socket, signed(key, { ...start, seq: 1 }) + signed(key, { ...finish, seq: 2 }));
    const outcome = await channel.finish();
    expect(outcome.violations).toEqual([]);
    expect(outcome.records.map((record) => record.type)).toEqual(["start", "finish"]);
  });

  it("removes the socket once the plugin is connected: nothing else can connect", async () => {
    const channel = await server();
    const { socket } = await connect(channel.socketPath);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(channel.socketPath)).toBe(false);
    const second = createConnection(channel.socketPath);
    const error = await new Promise<NodeJS.ErrnoException>((resolve) =>
      second.on("error", resolve),
    );
    expect(error.code).toBe("ENOENT");
    socket.destroy();
    expect((await channel.finish()).connections).toBe(1);
  });

  it("rejects a record with a wrong tag, out of sequence, of an unknown shape, or after the last", async () => {
    const cases: Array<[string, (key: string) => string, RegExp]> = [
      [
        "wrong key",
        () => signed("00".repeat(32), { ...start, seq: 1 }),
        /record 1 failed authentication/,
      ],
      [
        "no tag",
        () => `${JSON.stringify({ ...start, seq: 1 })}\n`,
        /record 1 failed authentication/,
      ],
      ["gap", (key) => signed(key, { ...start, seq: 2 }), /out of sequence: expected 1, got 2/],
      [
        "shape",
        (key) => signed(key, { type: "result", seq: 1, nodeid: "x" }),
        /record 1 has an unknown shape/,
      ],
      [
        "after finish",
        (key) => signed(key, { ...finish, seq: 1 }) + signed(key, { ...start, seq: 2 }),
        /after the session's last record/,
      ],
      [
        "truncated",
        (key) => signed(key, { ...start, seq: 1 }).slice(0, -10),
        /ended in the middle of a record/,
      ],
    ];
    for (const [name, lines, violation] of cases) {
      const channel = await server();
      const { socket, hello } = await connect(channel.socketPath);
      await end(socket, lines(hello.key as string));
      const outcome = await channel.finish();
      expect(outcome.violations.join("; "), name).toMatch(violation);
    }
  });

  it("reports no connection when nothing connected", async () => {
    const channel = await server();
    const outcome = await channel.finish();
    expect(outcome).toEqual({ connections: 0, records: [], violations: [] });
    expect(existsSync(channel.socketPath)).toBe(false);
  });
});
