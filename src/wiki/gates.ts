/**
 * The five acceptance gates. Each is deterministic (no model judges anything) and each result
 * is reported per candidate. Completeness, provenance and modality consistency reject; the
 * deduplication gate merges; the executability gate decides `exec_ok`, and a failure keeps the
 * entry as reference-only rather than rejecting it.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { isSkillsmithError } from "../core/errors.js";
import { fsOutcome } from "../core/fs.js";
import { BubblewrapSandbox } from "../env/sandbox/index.js";
import type { SandboxV1 } from "../env/sandbox/types.js";
import type { Candidate } from "./distill.js";
import { normalisedName } from "./distill.js";
import { type LibraryCheckout, libraryFor } from "./library.js";
import {
  type ExecOk,
  type ModalityName,
  skillId,
  TEXT_ONLY_EXEC,
  type Thresholds,
} from "./meta.js";
import { BrowserRenderer, isRenderedLanguage } from "./render.js";
import type { PreparedResource } from "./resources/types.js";

export const gateNames = [
  "completeness",
  "provenance",
  "deduplication",
  "modality",
  "content",
  "executability",
] as const;
export type GateName = (typeof gateNames)[number];

export interface GateResult {
  readonly gate: GateName;
  /** `skipped`: an earlier gate already decided the candidate. */
  readonly status: "pass" | "fail" | "merged" | "skipped" | "not-applicable" | "unknown";
  readonly detail: string;
}

export function completenessGate(candidate: Candidate, thresholds: Thresholds): GateResult {
  const missing: string[] = [];
  if (candidate.skillName === "") missing.push("skill_name is empty");
  if (candidate.categoryPath.length === 0) missing.push("category_path has no usable level");
  if (candidate.applicability === "") missing.push("applicability is empty");
  if (candidate.tags.length === 0) missing.push("no tags");
  if (candidate.textBody.length < thresholds.min_text_chars)
    missing.push(
      `text_body has ${candidate.textBody.length} characters, fewer than ${thresholds.min_text_chars}`,
    );
  const modalities = declaredModalities(candidate);
  if (modalities.length === 0) missing.push("no content modality (text, code or visual)");
  return missing.length === 0
    ? { gate: "completeness", status: "pass", detail: `modalities: ${modalities.join(", ")}` }
    : { gate: "completeness", status: "fail", detail: missing.join("; ") };
}

export function declaredModalities(candidate: Candidate): ModalityName[] {
  const modalities: ModalityName[] = [];
  if (candidate.textBody !== "") modalities.push("text");
  if (candidate.visualRefs.length > 0) modalities.push("visual");
  if (candidate.codeBody !== null) modalities.push("code");
  return modalities;
}

/** The source must be a resource of this build's manifest, and the unit must exist in it. */
export function provenanceGate(
  candidate: Candidate,
  resources: ReadonlyMap<string, PreparedResource>,
): GateResult {
  const resource = resources.get(candidate.sourcePath);
  if (resource === undefined)
    return {
      gate: "provenance",
      status: "fail",
      detail: `source "${candidate.sourcePath}" is not a resource in the manifest`,
    };
  if (candidate.nodeIndex < 0 || candidate.nodeIndex >= resource.units.length)
    return {
      gate: "provenance",
      status: "fail",
      detail: `node_index ${candidate.nodeIndex} is not a unit of "${candidate.sourcePath}" (it has ${resource.units.length})`,
    };
  return {
    gate: "provenance",
    status: "pass",
    detail: `${candidate.sourcePath} ${resource.units[candidate.nodeIndex]?.locator ?? ""}`.trim(),
  };
}

/** SHA-256 of a candidate's normalised code, null without code: what "the same code" means. */
export function codeDigest(code: string | null): string | null {
  return code === null ? null : createHash("sha256").update(code).digest("hex");
}

/**
 * The id of a second, different skill anchored to a unit that already has one: the protocol's id
 * input extended by the normalised name and the code's digest, so it is stable across builds
 * and differs from the unit's first skill. `variantSkillId(…, "", null)` is not the plain id.
 */
export function variantSkillId(
  domain: string,
  sourcePath: string,
  nodeIndex: number,
  name: string,
  code: string | null,
): string {
  return createHash("sha1")
    .update(
      `${skillId(domain, sourcePath, nodeIndex)}\0${normalisedName(name)}\0${codeDigest(code) ?? ""}`,
    )
    .digest("hex");
}

interface IndexedSkill {
  readonly name: string;
  readonly code: string | null;
}

/** The deduplication gate's decision for one candidate. */
export type Identity =
  | { readonly kind: "new"; readonly id: string }
  /** The same skill as an entry: folded into it, recorded in its `merges`. */
  | { readonly kind: "merge"; readonly id: string; readonly reason: string }
  /** A different skill from the same unit: kept apart under its own (variant) id, gated alone. */
  | { readonly kind: "apart"; readonly id: string; readonly reason: string };

/** What the deduplication gate compares a candidate with: entries already in the wiki or accepted earlier. */
export class DeduplicationIndex {
  private readonly skills = new Map<string, IndexedSkill>();
  private readonly names = new Map<string, string>();

  add(id: string, sourcePaths: readonly string[], skillName: string, code: string | null): void {
    this.skills.set(id, { name: normalisedName(skillName), code: codeDigest(code) });
    for (const path of sourcePaths) {
      const key = `${path}\0${normalisedName(skillName)}`;
      if (!this.names.has(key)) this.names.set(key, id);
    }
  }

  /**
   * Same unit, same normalised name and same code: the same skill, merged. Same unit but a
   * different name or code: a different skill, kept apart under a variant id (checked again, so
   * a third candidate equal to the second merges into the second). Same normalised name from
   * the same source (another unit): merged, as protocol B says.
   */
  identify(candidate: Candidate): Identity {
    const name = normalisedName(candidate.skillName);
    const code = codeDigest(candidate.codeBody);
    let id = candidate.skillId;
    let apart: string | undefined;
    const existing = this.skills.get(id);
    if (existing !== undefined) {
      if (existing.name === name && existing.code === code)
        return { kind: "merge", id, reason: "same unit, same normalised name and code" };
      apart = `same unit as ${id} but a different ${existing.name === name ? "code" : "name"}`;
      id = variantSkillId(
        candidate.domain,
        candidate.sourcePath,
        Math.max(0, candidate.nodeIndex),
        candidate.skillName,
        candidate.codeBody,
      );
      if (this.skills.has(id))
        return { kind: "merge", id, reason: `${apart}; the same skill as ${id}` };
    }
    const byName = this.names.get(`${candidate.sourcePath}\0${name}`);
    if (byName !== undefined && byName !== id)
      return {
        kind: "merge",
        id: byName,
        reason: `same normalised name "${name}" from the same source`,
      };
    return apart === undefined ? { kind: "new", id } : { kind: "apart", id, reason: apart };
  }
}

export function deduplicationGate(
  candidate: Candidate,
  index: DeduplicationIndex,
): GateResult & { identity: Identity } {
  const identity = index.identify(candidate);
  if (identity.kind === "merge")
    return {
      gate: "deduplication",
      status: "merged",
      detail: `${identity.reason}: merged into ${identity.id}`,
      identity,
    };
  return {
    gate: "deduplication",
    status: "pass",
    detail: identity.kind === "new" ? "new" : `${identity.reason}: kept apart as ${identity.id}`,
    identity,
  };
}

/** The files an entry would have, per modality, before they are written. */
export interface StagedFiles {
  readonly byModality: Record<
    ModalityName,
    { path: string; data: Uint8Array | undefined; problem?: string }[]
  >;
}

/** Each declared modality must resolve to at least one file, and every such file must be non-empty. */
export function modalityGate(candidate: Candidate, staged: StagedFiles): GateResult {
  const problems: string[] = [];
  for (const modality of declaredModalities(candidate)) {
    const files = staged.byModality[modality];
    if (files.length === 0) problems.push(`${modality}: declared but no file`);
    for (const file of files) {
      if (file.data === undefined)
        problems.push(`${modality}: ${file.path} ${file.problem ?? "does not exist"}`);
      else if (file.data.length === 0) problems.push(`${modality}: ${file.path} is empty`);
    }
  }
  return problems.length === 0
    ? { gate: "modality", status: "pass", detail: declaredModalities(candidate).join(", ") }
    : { gate: "modality", status: "fail", detail: problems.join("; ") };
}

export interface RunOutcome {
  readonly status: "passed" | "failed" | "unavailable";
  readonly detail: string;
  /** Programs: what they printed, each cut at `OUTPUT_LIMIT` characters (the cut is marked). */
  readonly stdout?: string;
  readonly stderr?: string;
  /** Rendered languages (HTML, CSS, SVG): a PNG of the render, kept as the visual modality. */
  readonly screenshot?: Uint8Array;
}

export interface RunLimits {
  readonly timeoutMs: number;
  readonly memoryBytes: number;
}

/** What a run may need besides the code: the library the snippet documents. */
export interface RunContext {
  readonly library?: LibraryCheckout;
}

/** Characters of a program's stdout and of its stderr kept in an outcome. */
export const OUTPUT_LIMIT = 8_000;

function bounded(text: string): string {
  return text.length <= OUTPUT_LIMIT
    ? text
    : `${text.slice(0, OUTPUT_LIMIT)}\n…(${text.length - OUTPUT_LIMIT} more characters cut)`;
}

/** Runs a candidate's code on its sample input; the executability gate's only dependency. */
export interface CodeRunner {
  run(
    code: string,
    language: string,
    input: string,
    limits: RunLimits,
    context?: RunContext,
  ): Promise<RunOutcome>;
  /** Release what the runner holds (a browser); the runner's creator calls it. */
  close?(): Promise<void>;
}

/** Where a Python snippet's library is staged inside its workspace. */
const LIBRARY_FOLDER = ".library";

const RUNNERS: Readonly<Record<string, { file: string; command: (file: string) => string[] }>> = {
  python: { file: "main.py", command: (file) => ["python3", file] },
  // errexit and pipefail: a snippet succeeds only when each of its commands did, so `curl … | sh`
  // with a failing curl fails here instead of exiting 0 on the empty pipe.
  bash: { file: "main.sh", command: (file) => ["bash", "-e", "-o", "pipefail", file] },
  javascript: { file: "main.js", command: (file) => [process.execPath, file] },
};

export function codeFileName(language: string | null): string {
  return (
    RUNNERS[language ?? ""]?.file ??
    `main.${language === null ? "txt" : language.replace(/[^a-z0-9]+/g, "") || "txt"}`
  );
}

/** Run code in a `SandboxV1` (no network, time and memory limits) in a fresh workspace. */
export class SandboxCodeRunner implements CodeRunner {
  constructor(private readonly sandbox: SandboxV1) {}

  async run(
    code: string,
    language: string,
    input: string,
    limits: RunLimits,
    context: RunContext = {},
  ): Promise<RunOutcome> {
    const runner = RUNNERS[language];
    if (runner === undefined)
      return { status: "unavailable", detail: `no runner for ${language} code` };
    const workspace = await mkdtemp(join(tmpdir(), "skillsmith-wiki-exec-"));
    try {
      await writeFile(join(workspace, runner.file), code);
      const mount = "/workspace/skill";
      const library = context.library?.language === language ? context.library : undefined;
      // Python finds the staged package on PYTHONPATH; Node finds node_modules beside main.js.
      if (library !== undefined)
        await library.stage(language === "python" ? join(workspace, LIBRARY_FOLDER) : workspace);
      const result = await this.sandbox.exec({
        command: runner.command(runner.file),
        workspace,
        workspaceMountPath: mount,
        network: "none",
        limits: { timeoutMs: limits.timeoutMs, memoryBytes: limits.memoryBytes },
        input,
        ...(library?.language === "python"
          ? { env: { PYTHONPATH: `${mount}/${LIBRARY_FOLDER}` } }
          : {}),
      });
      const against =
        library === undefined
          ? ""
          : `, against ${library.name} from the checkout of ${library.source}`;
      const output = { stdout: bounded(result.stdout), stderr: bounded(result.stderr) };
      if (result.timedOut)
        return {
          status: "failed",
          detail: `timed out after ${limits.timeoutMs} ms${against}`,
          ...output,
        };
      if (result.exitCode !== 0)
        return {
          status: "failed",
          detail: `exit code ${String(result.exitCode)}${against}: ${(result.stderr.trim().split("\n").at(-1) ?? "").slice(0, 300)}`,
          ...output,
        };
      return {
        status: "passed",
        detail: `exit 0 in ${Math.round(result.durationMs)} ms (${this.sandbox.kind} sandbox${against})`,
        ...output,
      };
    } catch (error) {
      if (isSkillsmithError(error) && error.family === "infrastructure")
        return { status: "unavailable", detail: `sandbox failed: ${error.message}` };
      throw error;
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  }
}

/** When no sandbox can run here: every run is `unavailable`, so exec_ok stays unknown. */
export class UnavailableRunner implements CodeRunner {
  constructor(private readonly reason: string) {}
  async run(): Promise<RunOutcome> {
    return { status: "unavailable", detail: `sandbox unavailable: ${this.reason}` };
  }
}

/**
 * Programs (python, bash, javascript) run in the sandbox; pages (html, css, svg) render in the
 * browser. Each language goes to the runner registered for it; others are `unavailable`.
 */
export class LanguageRunner implements CodeRunner {
  constructor(
    private readonly programs: CodeRunner,
    private readonly pages: CodeRunner,
  ) {}

  run(
    code: string,
    language: string,
    input: string,
    limits: RunLimits,
    context?: RunContext,
  ): Promise<RunOutcome> {
    return (isRenderedLanguage(language) ? this.pages : this.programs).run(
      code,
      language,
      input,
      limits,
      context,
    );
  }

  async close(): Promise<void> {
    await this.programs.close?.();
    await this.pages.close?.();
  }
}

/** The bubblewrap sandbox when it works on this machine, else a runner that says why not. */
export async function defaultSandboxRunner(): Promise<CodeRunner> {
  try {
    const sandbox = new BubblewrapSandbox();
    await sandbox.probe();
    return new SandboxCodeRunner(sandbox);
  } catch (error) {
    return new UnavailableRunner(error instanceof Error ? error.message : String(error));
  }
}

/**
 * The default runner: programs in the bubblewrap sandbox (when it works here), pages in headless
 * Chromium (when it is installed). The caller closes it.
 */
export async function defaultCodeRunner(
  options: {
    viewport?: { width: number; height: number };
    memoryBytes?: number;
    env?: Readonly<Record<string, string | undefined>>;
  } = {},
): Promise<CodeRunner> {
  return new LanguageRunner(await defaultSandboxRunner(), new BrowserRenderer(options));
}

export async function executabilityGate(
  candidate: Candidate,
  runner: CodeRunner,
  thresholds: Thresholds,
  resource?: PreparedResource,
): Promise<GateResult & { execOk: ExecOk; screenshot?: Uint8Array }> {
  if (candidate.codeBody === null)
    return {
      gate: "executability",
      status: "not-applicable",
      detail: "no code: nothing executed",
      execOk: TEXT_ONLY_EXEC,
    };
  const language = candidate.codeLanguage ?? "unknown";
  const library =
    resource === undefined ? undefined : await libraryFor(candidate.codeBody, language, resource);
  const outcome = await runner.run(
    candidate.codeBody,
    language,
    candidate.sampleInput,
    {
      timeoutMs: thresholds.exec_timeout_ms,
      memoryBytes: thresholds.exec_memory_bytes,
    },
    library === undefined ? {} : { library },
  );
  if (outcome.status === "passed")
    return {
      gate: "executability",
      status: "pass",
      detail: outcome.detail,
      execOk: true,
      ...(outcome.screenshot === undefined ? {} : { screenshot: outcome.screenshot }),
    };
  if (outcome.status === "failed")
    return { gate: "executability", status: "fail", detail: outcome.detail, execOk: false };
  return { gate: "executability", status: "unknown", detail: outcome.detail, execOk: "unknown" };
}

/** Read a file for staging; missing or unreadable files are reported, not thrown. */
export async function stageFile(
  path: string | undefined,
  label: string,
): Promise<{ path: string; data: Uint8Array | undefined; problem?: string }> {
  if (path === undefined)
    return {
      path: label,
      data: undefined,
      problem: "does not resolve to an image of the resource",
    };
  const outcome = await fsOutcome(
    (async () => {
      const info = await stat(path);
      return info.isFile() ? await readFile(path) : undefined;
    })(),
  );
  if (outcome.kind === "missing")
    return { path: basename(path), data: undefined, problem: "does not exist" };
  if (outcome.kind === "unreadable")
    return {
      path: basename(path),
      data: undefined,
      problem: `exists but cannot be read (${outcome.code})`,
    };
  if (outcome.value === undefined)
    return { path: basename(path), data: undefined, problem: "is not a file" };
  return { path: basename(path), data: outcome.value };
}
