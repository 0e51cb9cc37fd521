/**
 * Several verifiers' inventories in one sandboxed process (`python/skillsmith_inventory_batch.py`):
 * the interpreter starts and imports pytest once, then forks one child per verifier, which runs
 * that verifier's `python -m pytest …` with skillsmith's plugin in `inventory` mode over its own
 * channel. A verifier's inventory alone costs about 0.6 s of CPU, most of it starting Python and
 * importing pytest; a child of the batch about 0.15 s (see the Cost section of the README).
 *
 * What an inventory establishes is unchanged: real pytest collection, in the sandbox, on an
 * untouched workspace, with the plugin, each verifier in a process of its own (a fork of a parent
 * in which no verifier code ran, so nothing one verifier does to the interpreter reaches
 * another). What the batch changes is where each verifier is: every verifier of a batch is
 * mounted at its own path (`BATCH_ROOT/<i>/<its mount path>`), so a result is only accepted when
 * it provably reads the same at the verifier's own path (`acceptedInventory`); anything else —
 * a verifier whose command is not a plain `python -m pytest`, one that wrote to a temporary
 * folder before others collected, left a process behind, timed out, or came out opaque — is
 * answered `alone`, with the reason, and its caller takes it one at a time as before.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { packageRoot } from "../../../core/paths.js";
import type { Mount, SandboxExecResult } from "../../sandbox/types.js";
import type { CheckResult } from "../types.js";
import type { ChannelOutcome } from "./channel.js";
import { inventoryFromRun, type Locate, type VerifierInventory } from "./inventory.js";
import { openVerifierChannel, type VerifierChannel } from "./plugin.js";

/** Where the verifiers of a batch are mounted: `<BATCH_ROOT>/<index><mount path>`. */
export const BATCH_ROOT = "/run/skillsmith-inventory";
/** The batch's own read-only folder (the server and its job list) and its output folder. */
const BATCH_SERVER_MOUNT = "/run/skillsmith-inventory-server";
const BATCH_OUTPUT_MOUNT = "/run/skillsmith-inventory-output";
const SERVER_FILE = "skillsmith_inventory_batch.py";

/**
 * A verifier command the batch can run as its own child: `[NAME=value …] <python> -m pytest
 * ARGS`, plain words only (no quotes, expansions, globs, redirections or second commands), no
 * variable the interpreter reads at start or that moves the plugin or the interpreter.
 */
export interface PlainPytestCommand {
  readonly interpreter: string;
  readonly assignments: Readonly<Record<string, string>>;
  readonly args: readonly string[];
}

const WORD = /^[A-Za-z0-9_./:=,+@%-]+$/;
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;
const INTERPRETER = /^(\/[A-Za-z0-9_./-]*\/)?python(3(\.\d+)?)?$/;
/** Read at interpreter start, or deciding what runs: such a command is taken alone. */
const START_VARIABLES =
  /^(PYTHON.*|LD_.*|LC_.*|LANG|LANGUAGE|TZ|PATH|HOME|TMPDIR|PWD|SKILLSMITH_.*|PYTEST_ADDOPTS|MALLOC_.*)$/;

export function plainPytestCommand(command: string): PlainPytestCommand | string {
  const words = command.trim().split(/[ \t]+/);
  if (words.some((word) => !WORD.test(word))) {
    return "the command is not plain words (quotes, expansions, globs or several commands)";
  }
  const assignments: Record<string, string> = {};
  let index = 0;
  for (; index < words.length; index += 1) {
    const match = ASSIGNMENT.exec(words[index] ?? "");
    if (match === null) break;
    const name = match[1] ?? "";
    if (START_VARIABLES.test(name)) return `the command sets ${name}`;
    assignments[name] = match[2] ?? "";
  }
  const interpreter = words[index] ?? "";
  if (
    !INTERPRETER.test(interpreter) ||
    words[index + 1] !== "-m" ||
    words[index + 2] !== "pytest"
  ) {
    return "the command is not `python -m pytest …`";
  }
  return { interpreter, assignments, args: words.slice(index + 3) };
}

export interface BatchJob {
  readonly command: PlainPytestCommand;
  /** The verifier's mount path in the batch (`<BATCH_ROOT>/<i>/…`) and at its own. */
  readonly movedRoot: string;
  readonly ownRoot: string;
  /** The working folder inside the sandbox (in the moved folder). */
  readonly cwd: string;
  readonly timeoutMs: number;
  /** The verifier's environment beside the channel's (`SKILLSMITH_VERIFIER`, …). */
  readonly env: Readonly<Record<string, string>>;
  /** The verifier's mounts at its moved path (its folder read-only, its JUnit file writable). */
  readonly mounts: readonly Mount[];
  /** Its own mount path's ancestors must hold none of pytest's configuration files (checked). */
  readonly ownAncestors: readonly string[];
  readonly readJunit: () => Promise<readonly CheckResult[] | undefined>;
  /** Path mappings of the moved layout that report the verifier's own paths (`verifier:…`). */
  readonly verifierFile: (sandboxPath: string) => string | undefined;
  readonly locate: Locate;
}

export type BatchAnswer =
  | { readonly kind: "taken"; readonly inventory: VerifierInventory }
  | { readonly kind: "alone"; readonly reason: string };

export interface InventoryBatchOptions {
  readonly jobs: readonly BatchJob[];
  readonly interpreter: string;
  /** The shared bytecode cache's host folder, when the sandbox has one. */
  readonly bytecodeCache?: string;
  /** Run `command` in the sandbox (workspace mounted, untouched) with these additions. */
  readonly execute: (request: {
    readonly command: readonly string[];
    readonly env: Readonly<Record<string, string>>;
    readonly mounts: readonly Mount[];
    readonly timeoutMs: number;
  }) => Promise<SandboxExecResult>;
}

interface ServerLine {
  readonly job: number;
  readonly exit: number | null;
  readonly timedOut: boolean;
  readonly tainted: string | null;
  readonly lingering: boolean;
  /** Why the verifier's own path may collect differently (a configuration file above it). */
  readonly unsure: string | null;
}

/** pytest's configuration files: one above a verifier's own mount path could change its rootdir. */
const CONFIGURATION_FILES = [
  "pytest.ini",
  ".pytest.ini",
  "pyproject.toml",
  "tox.ini",
  "setup.cfg",
  "setup.py",
  "conftest.py",
];

/**
 * Take every job's inventory in one sandbox process. Each answer is `taken` (the inventory as
 * the verifier alone would have given it) or `alone` with the reason to take it alone.
 */
export async function takeInventoryBatch(options: InventoryBatchOptions): Promise<BatchAnswer[]> {
  const { jobs } = options;
  const base = tmpdir().length > 60 ? "/tmp" : tmpdir();
  const server = await mkdtemp(join(base, "skillsmith-inventory-server-"));
  const output = await mkdtemp(join(base, "skillsmith-inventory-output-"));
  const channels: VerifierChannel[] = [];
  try {
    await mkdir(server, { recursive: true });
    await writeFile(
      join(server, SERVER_FILE),
      await readFile(join(packageRoot(), "src", "env", "verifier", "python", SERVER_FILE)),
    );
    for (const [index] of jobs.entries()) {
      channels.push(
        await openVerifierChannel(
          { mode: "inventory", canaries: [] },
          {
            hostPaths: false,
            mountSuffix: `-${index}`,
            ...(options.bytecodeCache === undefined
              ? {}
              : { bytecodeCache: options.bytecodeCache }),
          },
        ),
      );
    }
    // `/` too: pytest looks for configuration files up to it (writable in some images).
    const watched = new Set<string>(["/"]);
    for (const job of jobs) {
      for (
        let folder = posix.dirname(job.movedRoot);
        folder !== "/";
        folder = posix.dirname(folder)
      ) {
        watched.add(folder);
      }
    }
    // The batch process's own variables: a PYTHONPATH of its own folder (so one the sandbox or
    // image sets does not reach the children's `sys.path`, as the channel's replaces it for a
    // verifier alone) and the shared bytecode cache; the children do not inherit them.
    const parentEnvironment: Record<string, string> = {
      PYTHONDONTWRITEBYTECODE: "1",
      PYTHONPATH: BATCH_SERVER_MOUNT,
      ...(channels[0]?.env.PYTHONPYCACHEPREFIX === undefined
        ? {}
        : { PYTHONPYCACHEPREFIX: channels[0].env.PYTHONPYCACHEPREFIX }),
    };
    const spec = {
      parentPythonPath: [BATCH_SERVER_MOUNT],
      batchEnvironment: Object.keys(parentEnvironment),
      configurationFiles: CONFIGURATION_FILES,
      watchedFolders: [...watched],
      jobs: jobs.map((job, index) => {
        const channel = channels[index] as VerifierChannel;
        const env: Record<string, string> = {
          PYTHONDONTWRITEBYTECODE: "1",
          ...job.env,
          ...channel.env,
          ...job.command.assignments,
          PWD: job.cwd,
        };
        return {
          index,
          cwd: job.cwd,
          args: job.command.args,
          env,
          pythonPath: (channel.env.PYTHONPATH ?? "").split(":").filter((entry) => entry !== ""),
          timeoutSeconds: job.timeoutMs / 1000,
          ownAncestors: job.ownAncestors,
        };
      }),
    };
    await writeFile(join(server, "jobs.json"), JSON.stringify(spec));
    const mounts = new Map<string, Mount>();
    for (const mount of [
      { hostPath: server, sandboxPath: BATCH_SERVER_MOUNT, readOnly: true },
      { hostPath: output, sandboxPath: BATCH_OUTPUT_MOUNT, readOnly: false },
      ...jobs.flatMap((job) => job.mounts),
      ...channels.flatMap((channel) => channel.mounts),
    ]) {
      // The shared bytecode cache is in every channel's mounts: once is enough.
      mounts.set(mount.sandboxPath, mount);
    }
    const execution = await options.execute({
      command: [
        options.interpreter,
        posix.join(BATCH_SERVER_MOUNT, SERVER_FILE),
        posix.join(BATCH_SERVER_MOUNT, "jobs.json"),
        BATCH_OUTPUT_MOUNT,
      ],
      env: parentEnvironment,
      mounts: [...mounts.values()],
      timeoutMs: jobs.reduce((sum, job) => sum + job.timeoutMs, 60_000),
    });
    const lines = new Map<number, ServerLine>();
    for (const text of execution.stdout.split("\n")) {
      if (!text.startsWith('{"job"')) continue;
      const line = JSON.parse(text) as ServerLine;
      lines.set(line.job, line);
    }
    const outcomes: ChannelOutcome[] = [];
    for (const channel of channels.splice(0)) outcomes.push(await channel.finish());
    const batchFailure =
      execution.limitHit !== undefined || execution.timedOut || execution.exitCode !== 0
        ? `the batch process ended early (exit ${execution.exitCode}${execution.limitHit === undefined ? "" : `, ${execution.limitHit.detail}`}): ${execution.stderr.trim().split("\n").slice(-2).join(" | ")}`
        : undefined;
    const answers: BatchAnswer[] = [];
    for (const [index, job] of jobs.entries()) {
      const line = lines.get(index);
      if (line === undefined) {
        answers.push({ kind: "alone", reason: batchFailure ?? "the batch gave no answer" });
        continue;
      }
      const reason =
        line.tainted ??
        (line.lingering ? "it left a process running" : undefined) ??
        line.unsure ??
        (line.timedOut ? "collecting timed out in the batch" : undefined);
      if (reason !== undefined) {
        answers.push({ kind: "alone", reason });
        continue;
      }
      const [stdout, stderr] = await Promise.all(
        ["stdout", "stderr"].map((suffix) =>
          readFile(join(output, `${index}.${suffix}`), "utf8").catch(() => ""),
        ),
      );
      const inventory = inventoryFromRun({
        outcome: outcomes[index] as ChannelOutcome,
        exitCode: line.exit,
        timedOut: false,
        junit: await job.readJunit(),
        verifierFile: job.verifierFile,
        locate: job.locate,
        output: `${stdout}\n${stderr}`,
      });
      answers.push(acceptedInventory(inventory, outcomes[index] as ChannelOutcome, job));
    }
    return answers;
  } finally {
    for (const channel of channels) await channel.finish().catch(() => undefined);
    await rm(server, { recursive: true, force: true });
    await rm(output, { recursive: true, force: true });
  }
}

function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(`${folder}/`);
}

/**
 * A batch's inventory as the verifier alone would give it, or why that is not certain. The
 * node ids stay as collected when pytest's root folder lies inside the moved verifier folder
 * (the ancestors between it and `/` are empty folders of the batch's, and the server checked
 * that the verifier's own ancestors hold no configuration file, so pytest would pick the same
 * folder at the verifier's own path) and every collected or failed module lies inside it too;
 * the paths (`verifier:…`) come from the moved layout's own mapping. A node id naming the moved
 * path (a parameter built from `__file__`) would differ: taken alone.
 */
export function acceptedInventory(
  inventory: VerifierInventory,
  outcome: ChannelOutcome,
  job: Pick<BatchJob, "movedRoot">,
): BatchAnswer {
  if (inventory.kind === "opaque") {
    return { kind: "alone", reason: `opaque in the batch (${inventory.reason})` };
  }
  const start = outcome.records.find((record) => record.type === "start");
  const rootdir = start?.type === "start" ? start.rootdir : undefined;
  if (typeof rootdir !== "string" || !within(rootdir, job.movedRoot)) {
    return {
      kind: "alone",
      reason: `pytest's root folder ${rootdir ?? "?"} is outside the verifier`,
    };
  }
  const paths: (string | null | undefined)[] = [];
  for (const record of outcome.records) {
    if (record.type === "collected") paths.push(...record.items.map((item) => item.path));
    if (record.type === "collect-error") paths.push(record.path);
  }
  const outside = paths.find((path) => typeof path === "string" && !within(path, job.movedRoot));
  if (outside !== undefined) {
    return { kind: "alone", reason: `it collects ${outside}, outside the verifier` };
  }
  const ids = [
    ...inventory.collected.map((test) => test.nodeid),
    ...inventory.defined.map((test) => test.nodeid),
    ...inventory.modules.map((module) => module.nodeid),
  ];
  if (ids.some((id) => id.includes(BATCH_ROOT))) {
    return { kind: "alone", reason: "a node id names the verifier's batch path" };
  }
  return { kind: "taken", inventory };
}
