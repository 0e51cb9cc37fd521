import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { isAbsolute, join, normalize, relative, sep } from "node:path";
import { InputError } from "../../core/errors.js";
import type { SandboxV1 } from "../sandbox/types.js";
import { flagForLimit } from "./flags.js";
import { parseJunitXml } from "./junit.js";
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
}

const defaultTimeoutMs = 10 * 60_000;

/**
 * Copy a verifier into a finished workspace, run it in the sandbox without network, and score it.
 * Checks come from the JUnit report when the verifier names one and it was written, else from
 * the runner's summary in the output. The pass ratio is passed / collected checks; a run that
 * timed out, collected nothing or crashed while collecting scores 0 with a flag saying which.
 */
export async function runVerifier(options: RunVerifierOptions): Promise<VerifierResult> {
  const { verifier, workspace } = options;
  await installVerifierFiles(workspace, verifier);
  const resultsPath =
    verifier.resultsFile === undefined
      ? undefined
      : await safeTarget(workspace, verifier.resultsFile, "resultsFile");

  const command =
    typeof verifier.command === "string" ? ["sh", "-c", verifier.command] : [...verifier.command];
  const execution = await options.sandbox.exec({
    command,
    workspace,
    workspaceMountPath: options.workspaceMountPath,
    network: "none",
    limits: { ...verifier.limits, timeoutMs: verifier.timeoutMs ?? defaultTimeoutMs },
    ...(verifier.env === undefined ? {} : { env: verifier.env }),
    ...(options.image === undefined ? {} : { image: options.image }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });

  const junit = resultsPath === undefined ? undefined : await readJunitReports(resultsPath);
  const output = stripAnsi(`${execution.stdout}\n${execution.stderr}`);
  const summary = junit === undefined ? parseRunnerSummary(output) : undefined;
  const checks: readonly CheckResult[] = junit ?? summary?.checks ?? [];
  const flags: VerifierFlag[] = [];
  // A sandbox limit that was hit is the verdict on the run, never a collection error.
  if (execution.limitHit !== undefined) flags.push(flagForLimit(execution.limitHit.limit));
  else if (execution.timedOut) flags.push("timeout");
  else if (isCollectionError(checks, output, execution.exitCode)) flags.push("collection-error");
  else if (checks.length === 0) flags.push("no-checks");

  const passed = checks.filter((check) => check.status === "pass").length;
  return {
    checks,
    passed,
    total: checks.length,
    passRatio: flags.length > 0 || checks.length === 0 ? 0 : passed / checks.length,
    flags,
    source: junit !== undefined ? "junit" : summary !== undefined ? "summary" : "none",
    ...(summary === undefined ? {} : { runner: summary.runner }),
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
      "verifier-path-outside-workspace",
      `verifier path "${relativePath}" must be relative to the workspace and stay inside it`,
      { field },
    );
  }
  return join(workspace, normalised);
}
