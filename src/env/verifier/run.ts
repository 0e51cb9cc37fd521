import { createHash } from "node:crypto";
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join, normalize, posix, relative, sep } from "node:path";
import { InputError } from "../../core/errors.js";
import type { Mount, SandboxExecResult, SandboxV1 } from "../sandbox/types.js";
import { flagForLimit } from "./flags.js";
import { bytecodeCacheOption } from "./integrity/bytecode-cache.js";
import type { VerifierInventory } from "./integrity/inventory.js";
import {
  type ChannelAdditions,
  InventoryMemo,
  injectCanaries,
  junitShortfall,
  runWithChannel,
  takeInventory,
  withLimitHit,
} from "./integrity/session.js";
import { parseJunitXml } from "./junit.js";
import { readOnlyVerifierFolder, verifierFolders } from "./read-only-folder.js";
import { parseRunnerSummary, stripAnsi } from "./summary.js";
import type { CheckResult, VerifierFlag, VerifierResult, VerifierSpec } from "./types.js";

export interface RunVerifierOptions {
  readonly sandbox: SandboxV1;
  /** The run's workspace on the host. The agent must have finished with it. */
  readonly workspace: string;
  /** Where the sandbox shows the workspace, e.g. `/workspace/<repo>`. */
  readonly workspaceMountPath: string;
  readonly verifier: VerifierSpec;
  /** Container backends: the prepared image (`PreparedBase.environment.image`). */
  readonly image?: string;
  readonly signal?: AbortSignal;
  /** The verifier's inventory when already taken (`verifierInventory`); taken here otherwise. */
  readonly inventory?: VerifierInventory;
}

const defaultTimeoutMs = 10 * 60_000;
/** Beyond this many files at the workspace root they are not each made read-only (mount count). */
const READ_ONLY_FILE_LIMIT = 256;

/** The workspace-relative paths of a verifier's files. */
async function verifierFileList(verifier: VerifierSpec): Promise<string[]> {
  const files = (verifier.files ?? []).map((file) => normalize(file.path).split(sep).join("/"));
  if (verifier.directory !== undefined) {
    const directory = verifier.directory;
    for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      files.push(relative(directory, join(entry.parentPath, entry.name)).split(sep).join("/"));
    }
  }
  return [...new Set(files)].sort();
}

interface Placement {
  readonly unsafe: boolean;
  readonly files: readonly string[];
  readonly resultsPath: string | undefined;
  verifierFile(sandboxPath: string): string | undefined;
  /** A path inside the sandbox → its location (`workspace:…`, else itself). */
  locate(sandboxPath: string): string;
  sandboxPathOf(file: string): string;
  execute(additions: ChannelAdditions): Promise<SandboxExecResult>;
}

/** Install the verifier's files into `workspace` and say how to run it there. */
async function place(
  options: Omit<RunVerifierOptions, "inventory" | "workspace">,
  workspace: string,
): Promise<Placement> {
  const { verifier, sandbox } = options;
  await installVerifierFiles(workspace, verifier);
  const resultsPath =
    verifier.resultsFile === undefined
      ? undefined
      : await safeTarget(workspace, verifier.resultsFile, "resultsFile");
  const files = await verifierFileList(verifier);
  const unsafe = sandbox.kind === "unsafe";
  const root = unsafe ? workspace : options.workspaceMountPath;
  const results =
    verifier.resultsFile === undefined
      ? undefined
      : normalize(verifier.resultsFile).split(sep).join("/");
  // The verifier's files cannot be rewritten by the code they test while they run, nor anything
  // added beside them: each folder holding them is read-only as a whole (`read-only-folder.ts`,
  // as for suite verifiers), its report writable. Files at the workspace root, where the
  // deliverable lives too, are each read-only.
  const readOnly: Mount[] = [];
  if (!unsafe) {
    const folders = verifierFolders(files);
    for (const folder of folders) {
      const report = results === undefined ? undefined : posix.relative(folder, results);
      readOnly.push(
        ...(await readOnlyVerifierFolder(
          {
            hostPath: join(workspace, folder),
            sandboxPath: posix.join(options.workspaceMountPath, folder),
          },
          report === undefined || report.startsWith("..") ? undefined : report,
        )),
      );
    }
    const atRoot = files.filter((file) => file !== results && !file.includes("/"));
    for (const file of atRoot.slice(0, READ_ONLY_FILE_LIMIT)) {
      readOnly.push({
        hostPath: join(workspace, file),
        sandboxPath: posix.join(options.workspaceMountPath, file),
        readOnly: true,
      });
    }
  }
  const command =
    typeof verifier.command === "string" ? ["sh", "-c", verifier.command] : [...verifier.command];
  return {
    unsafe,
    files,
    resultsPath,
    verifierFile: (sandboxPath) => {
      const file = posix.relative(root, sandboxPath);
      return files.includes(file) ? file : undefined;
    },
    locate: (sandboxPath) => {
      const file = posix.relative(root, sandboxPath);
      return file.startsWith("..") || posix.isAbsolute(file) ? sandboxPath : `workspace:${file}`;
    },
    sandboxPathOf: (file) => posix.join(root, file),
    execute: (additions) =>
      sandbox.exec({
        command,
        workspace,
        workspaceMountPath: options.workspaceMountPath,
        network: "none",
        limits: { ...verifier.limits, timeoutMs: verifier.timeoutMs ?? defaultTimeoutMs },
        env: { ...verifier.env, ...additions.env },
        ...(unsafe ? {} : { extraMounts: [...readOnly, ...additions.mounts] }),
        ...(options.image === undefined ? {} : { image: options.image }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      }),
  };
}

const inventories = new InventoryMemo();

async function inventoryKey(options: Omit<RunVerifierOptions, "workspace" | "inventory">) {
  const { verifier } = options;
  const hash = createHash("sha256");
  hash.update(
    JSON.stringify([
      options.sandbox.kind,
      options.image ?? "",
      options.workspaceMountPath,
      verifier.command,
      verifier.env ?? {},
      verifier.resultsFile ?? "",
    ]),
  );
  for (const file of verifier.files ?? []) {
    hash.update(`\0${file.path}\0${file.mode ?? ""}\0`);
    hash.update(file.content);
  }
  if (verifier.directory !== undefined) {
    for (const file of await verifierFileList({ command: "", directory: verifier.directory })) {
      hash.update(`\0${file}\0`);
      hash.update(await readFile(join(verifier.directory, file)));
    }
  }
  return hash.digest("hex");
}

/**
 * A verifier's inventory (`integrity/inventory.ts`): its command in `inventory` mode in a
 * workspace holding nothing but the verifier's own files. Taken once per verifier, sandbox and
 * image in this process.
 */
export async function verifierInventory(
  options: Omit<RunVerifierOptions, "workspace" | "inventory">,
): Promise<VerifierInventory> {
  return inventories.get(await inventoryKey(options), async () => {
    const scratch = await mkdtemp(join(tmpdir(), "skillsmith-inventory-"));
    try {
      const placement = await place(options, scratch);
      return await takeInventory({
        hostPaths: placement.unsafe,
        ...(await bytecodeCacheOption(options)),
        ...(options.verifier.env === undefined ? {} : { env: options.verifier.env }),
        execute: (additions) => placement.execute(additions),
        readJunit: async () =>
          placement.resultsPath === undefined ? undefined : readJunitReports(placement.resultsPath),
        verifierFile: (path) => placement.verifierFile(path),
        locate: (path) => placement.locate(path),
      });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
}

/**
 * Copy a verifier into a finished workspace, run it in the sandbox without network, and score it.
 * A pytest verifier is scored from skillsmith's channel (its plugin, canaries and cross-checks:
 * `integrity/`); any other from the JUnit report when the verifier names one and it was written,
 * else from the runner's summary in the output. The pass ratio is passed / collected checks; a
 * run that timed out, collected nothing, crashed while collecting or was tampered with scores 0
 * with a flag saying which.
 */
export async function runVerifier(options: RunVerifierOptions): Promise<VerifierResult> {
  const inventory = options.inventory ?? (await verifierInventory(options));
  const placement = await place(options, options.workspace);
  const { resultsPath } = placement;

  if (inventory.kind === "pytest") {
    const plan = await injectCanaries(inventory, (file) => join(options.workspace, file));
    const root = placement.unsafe ? options.workspace : options.workspaceMountPath;
    const { execution, assessment } = await runWithChannel({
      inventory,
      plan,
      sandboxPathOf: (file) => placement.sandboxPathOf(file),
      locate: (path) => placement.locate(path),
      hostPaths: placement.unsafe,
      ...(await bytecodeCacheOption(options)),
      ...(options.verifier.env === undefined ? {} : { env: options.verifier.env }),
      execute: (additions) => placement.execute(additions),
      readJunit: async () =>
        resultsPath === undefined
          ? undefined
          : ((await readJunitReports(resultsPath)) ?? "missing"),
      // The verifier's files live in the workspace: every conftest.py there is in the repository.
      conftestAllowed: (path) => !posix.relative(root, path).startsWith(".."),
    });
    const limitedRun = withLimitHit(assessment, execution);
    return {
      checks: assessment.checks,
      passed: assessment.passed,
      total: assessment.total,
      passRatio: limitedRun.passRatio,
      flags: limitedRun.flags,
      source: "channel",
      evidence: limitedRun.evidence,
      exitCode: execution.exitCode,
      timedOut: execution.timedOut,
      durationMs: execution.durationMs,
      stdout: execution.stdout,
      stderr: execution.stderr,
    };
  }

  const execution = await placement.execute({ env: {}, mounts: [] });
  const junit = resultsPath === undefined ? undefined : await readJunitReports(resultsPath);
  const output = stripAnsi(`${execution.stdout}\n${execution.stderr}`);
  const summary = junit === undefined ? parseRunnerSummary(output) : undefined;
  const checks: readonly CheckResult[] = junit ?? summary?.checks ?? [];
  const flags: VerifierFlag[] = [];
  const evidence: string[] = [];
  // A sandbox limit that was hit is the verdict on the run, never a collection error.
  if (execution.limitHit !== undefined) {
    flags.push(flagForLimit(execution.limitHit.limit));
    evidence.push(execution.limitHit.detail);
  } else if (execution.timedOut) flags.push("timeout");
  else if (isCollectionError(checks, output, execution.exitCode)) flags.push("collection-error");
  else if (checks.length === 0) flags.push("no-checks");
  const limited = execution.limitHit !== undefined || execution.timedOut;
  const shortfall = limited ? undefined : junitShortfall(inventory.junitChecks, junit);
  if (shortfall !== undefined) {
    flags.push("tampered");
    evidence.push(shortfall);
  }

  const passed = checks.filter((check) => check.status === "pass").length;
  return {
    checks,
    passed,
    total: checks.length,
    passRatio: flags.length > 0 || checks.length === 0 ? 0 : passed / checks.length,
    flags,
    source: junit !== undefined ? "junit" : summary !== undefined ? "summary" : "none",
    ...(summary === undefined ? {} : { runner: summary.runner }),
    evidence,
    exitCode: execution.exitCode,
    timedOut: execution.timedOut,
    durationMs: execution.durationMs,
    stdout: execution.stdout,
    stderr: execution.stderr,
  };
}

/**
 * A verifier crashed while collecting when it reported that itself (pytest's "error(s) during
 * collection", a JUnit error whose message is "collection failure") or when it exited non-zero
 * without collecting anything other than pytest's "no tests ran" (exit 5, which is `no-checks`).
 * Errors of the second kind include import errors, syntax errors, a missing test runner and a Go
 * package that did not build.
 */
export function isCollectionError(
  checks: readonly CheckResult[],
  output: string,
  exitCode: number | null,
): boolean {
  if (/\d+ errors? during collection/.test(output)) return true;
  if (
    checks.some(
      (check) => check.status === "error" && /collection failure/i.test(check.message ?? ""),
    )
  ) {
    return true;
  }
  if (checks.length > 0) return false;
  return exitCode !== 0 && exitCode !== 5;
}

export async function readJunitReports(path: string): Promise<CheckResult[] | undefined> {
  // Reports are read on the host from a folder the sandboxed command controlled: symbolic links
  // (which could point at any host file) are not followed.
  // Whatever keeps us from seeing a report (absent, or made unreadable by the workload) is the
  // same finding as no report, which the caller flags; it must not become an error the
  // sandboxed command can raise to abort the run.
  const found = await lstat(path).catch(() => undefined);
  if (found === undefined || found.isSymbolicLink()) return undefined;
  const files = found.isDirectory()
    ? (await readdir(path, { withFileTypes: true }))
        .filter((entry) => entry.isFile() && entry.name.endsWith(".xml"))
        .map((entry) => join(path, entry.name))
        .sort()
    : [path];
  const checks: CheckResult[] = [];
  let readAny = false;
  for (const file of files) {
    const parsed = parseJunitXml(await readFile(file, "utf8"));
    if (!parsed.ok) continue;
    readAny = true;
    checks.push(...parsed.value);
  }
  return readAny ? checks : undefined;
}

/**
 * Write the verifier's files into the workspace, replacing whatever the agent left there. The
 * agent had the workspace to itself, so any path may hold a planted symbolic link: every folder
 * on the way to a verifier file is made a real folder (a link there is removed, not followed),
 * so the runner — outside the sandbox — never writes or deletes outside the workspace.
 */
export async function installVerifierFiles(
  workspace: string,
  verifier: VerifierSpec,
): Promise<void> {
  if (verifier.directory !== undefined) {
    const directory = verifier.directory;
    const entries = await readdir(directory, { recursive: true, withFileTypes: true });
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const source = join(entry.parentPath, entry.name);
      const relativePath = relative(directory, source);
      const target = await safeTarget(workspace, relativePath, "directory");
      await copyFile(source, target);
      await chmod(target, (await stat(source)).mode & 0o777);
    }
  }
  for (const file of verifier.files ?? []) {
    const target = await safeTarget(workspace, file.path, "files");
    await writeFile(target, file.content, { mode: file.mode ?? 0o644 });
    await chmod(target, file.mode ?? 0o644);
  }
}

/**
 * The host path for a workspace-relative path, with every folder above it a real folder inside
 * the workspace and nothing left at the path itself.
 */
async function safeTarget(workspace: string, relativePath: string, field: string): Promise<string> {
  const target = insideWorkspace(workspace, relativePath, field);
  const parts = relative(workspace, target).split(sep);
  let current = workspace;
  for (const part of parts.slice(0, -1)) {
    current = join(current, part);
    // Absent or not inspectable: the `mkdir` below then creates it or fails naming the path.
    const info = await lstat(current).catch(() => undefined);
    if (info !== undefined && !info.isDirectory()) await rm(current, { force: true });
    if (info === undefined || !info.isDirectory()) await mkdir(current);
  }
  await rm(target, { recursive: true, force: true });
  return target;
}

function insideWorkspace(workspace: string, relativePath: string, field: string): string {
  const normalised = normalize(relativePath);
  if (
    isAbsolute(relativePath) ||
    normalised === "." ||
    normalised === ".." ||
    normalised.startsWith(`..${sep}`)
  ) {
    throw new InputError(
      "env.verifier-path-outside-workspace",
      `verifier path "${relativePath}" must be relative to the workspace and stay inside it`,
      { field },
    );
  }
  return join(workspace, normalised);
}
