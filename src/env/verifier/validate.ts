import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { applyDiff } from "../../core/apply-diff.js";
import { InputError } from "../../core/errors.js";
import type { SandboxV1 } from "../sandbox/types.js";
import { withPreparedRuntime } from "../setup/runtime.js";
import type { PreparedBase } from "../workspace/base.js";
import { type MaterialiseOptions, materialiseWorkspace } from "../workspace/materialise.js";
import { type CollectionDiagnosis, diagnoseCollectionError } from "./diagnose.js";
import { findKeywordOnlyChecks, type KeywordOnlyCheck, type ScannedFile } from "./keyword-scan.js";
import { runVerifier } from "./run.js";
import type { VerifierFile, VerifierResult, VerifierSpec } from "./types.js";

/** A known-good solution: a unified diff applied with `git apply`, or files written over the tree. */
export type ReferenceSolution =
  | { readonly patch: string }
  | { readonly files: readonly VerifierFile[] };

export interface ValidateVerifierOptions {
  readonly base: PreparedBase;
  readonly verifier: VerifierSpec;
  readonly sandbox: SandboxV1;
  readonly reference?: ReferenceSolution;
  readonly materialise?: MaterialiseOptions;
  /**
   * The requirement the verifier checks: a negative control that cannot import a module its
   * File Operations ask to create is failing as it should, not a problem (`diagnose.ts`).
   */
  readonly requirement?: { readonly fileOperations: readonly string[]; readonly text?: string };
}

export interface VerifierValidation {
  /** The verifier run against the untouched repository. */
  readonly negative: VerifierResult;
  /** Why the negative control collected nothing, when it crashed while collecting. */
  readonly negativeDiagnosis?: CollectionDiagnosis;
  /** Checks that pass on the untouched repository: they cannot tell a solution from none. */
  readonly nonDiscriminating: readonly string[];
  /** The verifier run against the reference solution, when one was given. */
  readonly positive?: VerifierResult;
  /** Checks that do not pass on the reference solution (they must all pass). */
  readonly referenceFailures: readonly string[];
  readonly keywordOnly: readonly KeywordOnlyCheck[];
  /** Human-readable problems; empty when the verifier is sound. */
  readonly problems: readonly string[];
  readonly ok: boolean;
}

/**
 * Check that a verifier measures what it should. Negative control: run it on the untouched
 * repository — every check that already passes there has no discriminative power. Positive
 * control (when a reference solution exists): run it on the solved repository — every check must
 * pass, and a flagged run (no checks, collection error, timeout) is a problem. Also scan the
 * verifier's test files for checks that only grep source text for keywords.
 */
export async function validateVerifier(
  options: ValidateVerifierOptions,
): Promise<VerifierValidation> {
  const problems: string[] = [];
  const negative = await inFreshWorkspace(options, async () => undefined);
  const nonDiscriminating = negative.checks
    .filter((check) => check.status === "pass")
    .map((check) => check.name);
  const negativeDiagnosis = negative.flags.includes("collection-error")
    ? diagnoseCollectionError({
        output: `${negative.stdout}\n${negative.stderr}`,
        fileOperations: options.requirement?.fileOperations ?? [],
        ...(options.requirement?.text === undefined
          ? {}
          : { requirementText: options.requirement.text }),
        workspaceMountPath: options.base.workspaceMountPath,
      })
    : undefined;
  const failingAsItShould =
    negativeDiagnosis?.kind === "deliverable-missing" &&
    negative.flags.every((flag) => flag === "collection-error");
  if (negative.flags.length > 0 && !failingAsItShould) {
    problems.push(
      `negative control: verifier flagged ${negative.flags.join(", ")}${negativeDiagnosis === undefined ? "" : ` (${negativeDiagnosis.reason})`}`,
    );
  }
  if (nonDiscriminating.length > 0) {
    problems.push(
      `negative control: ${nonDiscriminating.length} check(s) already pass on the untouched repository: ${nonDiscriminating.join(", ")}`,
    );
  }

  let positive: VerifierResult | undefined;
  let referenceFailures: string[] = [];
  if (options.reference !== undefined) {
    const reference = options.reference;
    positive = await inFreshWorkspace(options, (workspace) => applyReference(workspace, reference));
    referenceFailures = positive.checks
      .filter((check) => check.status !== "pass")
      .map((check) => check.name);
    if (positive.flags.length > 0) {
      problems.push(`positive control: verifier flagged ${positive.flags.join(", ")}`);
    }
    if (referenceFailures.length > 0) {
      problems.push(
        `positive control: ${referenceFailures.length} check(s) do not pass on the reference solution: ${referenceFailures.join(", ")}`,
      );
    }
  }

  const keywordOnly = findKeywordOnlyChecks(await verifierSources(options.verifier));
  for (const finding of keywordOnly) {
    problems.push(`${finding.file}:${finding.line} ${finding.test}: ${finding.reason}`);
  }
  return {
    negative,
    ...(negativeDiagnosis === undefined ? {} : { negativeDiagnosis }),
    nonDiscriminating,
    ...(positive === undefined ? {} : { positive }),
    referenceFailures,
    keywordOnly,
    problems,
    ok: problems.length === 0,
  };
}

async function inFreshWorkspace(
  options: ValidateVerifierOptions,
  prepare: (workspace: string) => Promise<void>,
): Promise<VerifierResult> {
  const workspace = await materialiseWorkspace(options.base, {
    ...options.materialise,
    keep: false,
  });
  try {
    await prepare(workspace.path);
    return await runVerifier({
      // In the base's prepared environment, as agent and verifier runs are.
      sandbox: withPreparedRuntime(options.sandbox, options.base.runtime),
      workspace: workspace.path,
      workspaceMountPath: workspace.mountPath,
      verifier: options.verifier,
      ...(options.base.environment === undefined ? {} : { image: options.base.environment.image }),
    });
  } finally {
    await workspace.dispose();
  }
}

async function applyReference(workspace: string, reference: ReferenceSolution): Promise<void> {
  if ("files" in reference) {
    for (const file of reference.files) {
      const target = join(workspace, file.path);
      if (relative(workspace, target).startsWith("..")) {
        throw new InputError(
          "env.reference-path-outside-workspace",
          `reference file "${file.path}" leaves the workspace`,
          {
            field: "reference.files",
          },
        );
      }
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, file.content, { mode: file.mode ?? 0o644 });
    }
    return;
  }
  // The one patch applier (core/apply-diff.ts): the workspace is the top of git's search
  // (GIT_CEILING_DIRECTORIES) and no host git configuration is read.
  const applied = await applyDiff(workspace, reference.patch);
  if (!applied.ok) {
    throw new InputError(
      "env.reference-patch-does-not-apply",
      `the reference solution's patch does not apply to the base commit: ${applied.message}`,
      { field: "reference.patch" },
    );
  }
}

/** The verifier's own source files, for the keyword scan. */
async function verifierSources(verifier: VerifierSpec): Promise<ScannedFile[]> {
  const sources: ScannedFile[] = [];
  for (const file of verifier.files ?? []) {
    sources.push({
      path: file.path,
      content:
        typeof file.content === "string"
          ? file.content
          : Buffer.from(file.content).toString("utf8"),
    });
  }
  if (verifier.directory !== undefined) {
    const directory = verifier.directory;
    const entries = await readdir(directory, { recursive: true, withFileTypes: true });
    for (const entry of entries) {
      if (!entry.isFile() || !/\.(py|m?[jt]sx?|cjs|cts)$/.test(entry.name)) continue;
      const path = join(entry.parentPath, entry.name);
      sources.push({ path: relative(directory, path), content: await readFile(path, "utf8") });
    }
  }
  return sources;
}
