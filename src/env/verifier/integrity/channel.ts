/**
 * The host end of the verifier channel: a Unix socket that accepts exactly one connection (the
 * skillsmith pytest plugin's, made when pytest imports it, before any test module), hands it a
 * per-run key, and reads authenticated, sequenced records until the plugin closes it.
 *
 * Wire format (protocol 1), one line per message:
 * - skillsmith → plugin, once, right after the connection: `{"protocol":1,"key":"<64 hex>",
 *   "mode":"inventory"|"run"|"inventory-run","canaries":["<file>::<name>",...]}`.
 * - plugin → skillsmith: `<HMAC-SHA256(key, body) as 64 hex> <body>`, where body is a JSON object
 *   with `type` and `seq` (1, 2, 3, … with no gap).
 *
 * The socket file is removed as soon as the plugin has connected, so nothing else can connect;
 * a connection that raced in anyway, a record with a bad tag or out of sequence, a malformed or
 * oversized line and bytes after the plugin's last record are all protocol violations, which
 * the assessment turns into the `tampered` flag. See `../README.md` for what this does and does
 * not stop.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { unlink } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { z } from "zod";
import { parseResult } from "../../../core/parse.js";

export const CHANNEL_PROTOCOL = 1;
/** More than any honest session sends (a record per test, a few hundred bytes each). */
export const CHANNEL_BYTE_LIMIT = 64 * 1024 * 1024;
/** How long to wait for the plugin's end of the stream once the verifier's process is gone. */
const CLOSE_GRACE_MS = 2_000;

const phase = z.enum(["passed", "failed", "skipped"]);

const recordSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("start"),
    seq: z.number(),
    mode: z.string().nullable(),
    pid: z.number(),
    python: z.string(),
    pytest: z.string(),
    rootdir: z.string(),
    python_functions: z.array(z.string()).optional(),
    /** Modules imported from the workspace before the plugin loaded (none when honest). */
    preloaded: z.array(z.string()).optional(),
  }),
  z.object({
    type: z.literal("registered"),
    seq: z.number(),
    name: z.string(),
    object: z.string(),
    file: z.string().nullable(),
    conftest: z.boolean(),
  }),
  z.object({
    type: z.literal("collect-error"),
    seq: z.number(),
    nodeid: z.string(),
    message: z.string().nullable(),
    path: z.string().nullable().optional(),
    defined: z
      .array(
        z.object({
          base: z.string(),
          min: z.number(),
          parametrised: z.boolean(),
          exact: z.boolean().optional(),
        }),
      )
      .optional(),
    declared_plugins: z.array(z.string()).optional(),
  }),
  z.object({
    type: z.literal("collected"),
    seq: z.number(),
    items: z.array(
      z.object({
        nodeid: z.string(),
        path: z.string().nullable(),
        kind: z.enum(["function", "other"]),
        name: z.string(),
      }),
    ),
    declared_plugins: z.array(z.string()).optional(),
  }),
  z.object({
    type: z.literal("result"),
    seq: z.number(),
    nodeid: z.string(),
    phases: z.object({
      setup: phase.optional(),
      call: phase.optional(),
      teardown: phase.optional(),
    }),
    observed: z.string(),
    wrapper: z.string().nullable(),
    xfail: z.boolean(),
    messages: z.record(z.string(), z.string()),
    probes: z.array(z.string()),
  }),
  z.object({
    type: z.literal("finish"),
    seq: z.number(),
    exitstatus: z.number(),
    testsfailed: z.number(),
    testscollected: z.number(),
    shouldstop: z.string().nullable(),
    shouldfail: z.string().nullable(),
    maxfail: z.number(),
    replaced: z.array(z.string()),
    unfinished: z.array(z.string()),
  }),
  z.object({
    /** The audit hook saw untrusted code do something only tampering needs (`file`:`line`). */
    type: z.literal("tripwire"),
    seq: z.number(),
    event: z.string(),
    detail: z.string(),
    file: z.string(),
    line: z.number(),
  }),
  z.object({
    type: z.literal("plugin-error"),
    seq: z.number(),
    where: z.string(),
    error: z.string(),
  }),
]);

export type ChannelRecord = z.infer<typeof recordSchema>;
export type ResultRecord = Extract<ChannelRecord, { type: "result" }>;
export type FinishRecord = Extract<ChannelRecord, { type: "finish" }>;
export type CollectedRecord = Extract<ChannelRecord, { type: "collected" }>;
export type CollectErrorRecord = Extract<ChannelRecord, { type: "collect-error" }>;

/** What came over the channel during one verifier run. */
export interface ChannelOutcome {
  /** How many connections reached the socket (1 for an honest pytest session). */
  readonly connections: number;
  /** Authenticated records, in order, up to the first violation. */
  readonly records: readonly ChannelRecord[];
  /** Why the stream cannot be trusted (empty for an honest session). */
  readonly violations: readonly string[];
}

/**
 * What the plugin does (see its module docstring): `inventory` collects only; `run` runs and
 * reports; `inventory-run` does both in one session, for a run no agent's code is near.
 */
export type ChannelMode = "inventory" | "run" | "inventory-run";

export interface ChannelHello {
  readonly mode: ChannelMode;
  /** This run's canary tests as `<file inside the sandbox>::<name>` (only the plugin learns them). */
  readonly canaries: readonly string[];
}

const MAX_VIOLATIONS = 5;

export class ChannelServer {
  private readonly key = randomBytes(32);
  private readonly records: ChannelRecord[] = [];
  private readonly violations: string[] = [];
  private connections = 0;
  private connection: Socket | undefined;
  private closed: Promise<void> | undefined;
  private pending = "";
  private bytes = 0;
  private sequence = 0;
  /** Set once the plugin's `finish` record arrived: anything after it is a violation. */
  private finished = false;

  private constructor(
    private readonly server: Server,
    readonly socketPath: string,
    private readonly hello: ChannelHello,
  ) {}

  /** Listen on `socketPath` (which must not exist) for the plugin of one verifier run. */
  static async listen(socketPath: string, hello: ChannelHello): Promise<ChannelServer> {
    const server = createServer({ allowHalfOpen: false });
    const channel = new ChannelServer(server, socketPath, hello);
    server.on("connection", (socket) => channel.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ path: socketPath, backlog: 1 }, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return channel;
  }

  private violation(message: string): void {
    if (this.violations.length < MAX_VIOLATIONS) this.violations.push(message);
  }

  private accept(socket: Socket): void {
    this.connections += 1;
    if (this.connection !== undefined) {
      this.violation("a second connection reached the channel socket");
      socket.destroy();
      return;
    }
    this.connection = socket;
    // Nothing else may connect: stop listening and remove the socket file.
    this.server.close();
    // Best-effort: with the server closed the file is only a stale name in a private folder.
    unlink(this.socketPath).catch(() => undefined);
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => undefined);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => this.receive(chunk));
    socket.write(
      `${JSON.stringify({
        protocol: CHANNEL_PROTOCOL,
        key: this.key.toString("hex"),
        mode: this.hello.mode,
        canaries: this.hello.canaries,
      })}\n`,
    );
  }

  private receive(chunk: string): void {
    this.bytes += chunk.length;
    if (this.bytes > CHANNEL_BYTE_LIMIT) {
      this.violation(`the channel carried more than ${CHANNEL_BYTE_LIMIT} bytes`);
      this.connection?.destroy();
      return;
    }
    this.pending += chunk;
    for (;;) {
      const end = this.pending.indexOf("\n");
      if (end < 0) break;
      const line = this.pending.slice(0, end);
      this.pending = this.pending.slice(end + 1);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (this.violations.length > 0) return;
    if (this.finished) {
      this.violation("data arrived on the channel after the session's last record");
      return;
    }
    const space = line.indexOf(" ");
    const tag = space === 64 ? Buffer.from(line.slice(0, 64), "hex") : undefined;
    const body = line.slice(space + 1);
    const expected = createHmac("sha256", this.key).update(body, "utf8").digest();
    if (tag === undefined || tag.length !== expected.length || !timingSafeEqual(tag, expected)) {
      this.violation(
        `channel record ${this.sequence + 1} failed authentication (${JSON.stringify(line.slice(0, 80))})`,
      );
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      // Not swallowed: a record that is not JSON is a violation of the channel, recorded.
      this.violation(`channel record ${this.sequence + 1} is not JSON`);
      return;
    }
    const record = parseResult(recordSchema, parsed);
    if (!record.ok) {
      this.violation(
        `channel record ${this.sequence + 1} has an unknown shape: ${record.error.message}`,
      );
      return;
    }
    if (record.value.seq !== this.sequence + 1) {
      this.violation(
        `channel record out of sequence: expected ${this.sequence + 1}, got ${record.value.seq}`,
      );
      return;
    }
    this.sequence = record.value.seq;
    this.records.push(record.value);
    if (record.value.type === "finish") this.finished = true;
  }

  /**
   * Stop listening and return what arrived. Call after the verifier's process has ended: the
   * plugin's end of the stream is normally closed by then; a holder that outlived it (possible
   * only without a pid namespace) gets a short grace period and is then cut off.
   */
  async finish(): Promise<ChannelOutcome> {
    if (this.connection === undefined) {
      await new Promise<void>((resolve) => this.server.close(() => resolve()));
      // Best-effort, as on connection: the server is closed, the name is only a leftover.
      await unlink(this.socketPath).catch(() => undefined);
    } else {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.closed,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, CLOSE_GRACE_MS);
        }),
      ]);
      clearTimeout(timer);
      this.connection.destroy();
      if (this.pending !== "" && this.violations.length === 0) {
        this.violation("the channel ended in the middle of a record");
      }
    }
    return {
      connections: this.connections,
      records: [...this.records],
      violations: [...this.violations],
    };
  }
}
