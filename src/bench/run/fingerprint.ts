/**
 * A run's fingerprint: a SHA-256 over everything that determines its outcome, so a result can
 * stand in for another run only when nothing that could change it differs (baseline reuse,
 * `./reuse.ts`). The inputs, kept beside the digest in the store, are:
 *
 * - the prepared base: its tree digest (the bytes the agent starts from), commit and image;
 * - the agent: harness name, its CLI's version, model spec, the configuration's limits, the
 *   skill's agent limits, and what a model-less agent will do (the replay patch's digest);
 * - the requirement: its text, File Operations, reference solution, and the verifier (its
 *   folder's tree digest and every setting, the effective timeout included);
 * - the environment's limits and the sandbox kind;
 * - the skills installed (tree digest of each folder; none in the `without` arm);
 * - skillsmith's version (the runner itself decides scores).
 *
 * Not included: the repeat number (repeats are independent draws of the same run) and the model
 * endpoint's URL (where the model is served, not which model).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { harnessFacts } from "../../agents/index.js";
import { canonicalJson } from "../../core/canonical-json.js";
import type { PreparedBase } from "../../env/index.js";
import { treeDigest } from "../../env/index.js";
import type { RunFingerprint } from "../store/results.js";
import type { Configuration } from "../suite/schema.js";
import type { SuiteRequirement, SuiteSkill } from "../suite/types.js";

export interface FingerprintInputs {
  readonly skillsmith: string;
  readonly base: { readonly digest: string; readonly commit: string; readonly image?: string };
  readonly agent: {
    readonly harness: string;
    readonly kind: string;
    readonly version: string;
    readonly model: string;
    readonly limits: unknown;
    readonly skillLimits: unknown;
    /** Digest of the replay patch (replay) — what a model-less agent will write. */
    readonly replay?: string;
  };
  readonly requirement: {
    readonly id: string;
    readonly text: string;
    readonly fileOperations: readonly string[];
    readonly solution?: string;
    readonly verifier: Readonly<Record<string, unknown>>;
  };
  readonly environmentLimits: unknown;
  readonly sandbox: string;
  /** Tree digests of the installed Agent Skills folders, in install order. */
  readonly skills: readonly string[];
}

/** Fingerprints hash the one canonical JSON (`../../core/canonical-json.ts`). */
export { canonicalJson };

export function fingerprintOf(inputs: FingerprintInputs): RunFingerprint {
  const text = canonicalJson(inputs);
  return {
    digest: createHash("sha256").update(text).digest("hex"),
    inputs: JSON.parse(text) as Record<string, unknown>,
  };
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Tree digests of folders, each computed once per process (suite folders do not change mid-run). */
export class FolderDigests {
  private readonly digests = new Map<string, Promise<string>>();

  of(folder: string): Promise<string> {
    let digest = this.digests.get(folder);
    if (digest === undefined) {
      digest = treeDigest(folder);
      this.digests.set(folder, digest);
      digest.catch(() => this.digests.delete(folder));
    }
    return digest;
  }
}

/**
 * The CLI binary whose version is recorded for an agent kind (manifest `versions.agents`), as
 * its harness registration names it (`versionCommand`).
 */
export function agentBinary(agent: string): string | undefined {
  return harnessFacts(agent).versionCommand?.binary;
}

export interface RunDeterminants {
  readonly configuration: Configuration;
  readonly skill: SuiteSkill;
  readonly requirement: SuiteRequirement;
  readonly base: PreparedBase;
  /** The folders installed in this arm (none without the skill). */
  readonly installed: readonly string[];
  readonly harness: string;
  readonly modelSpec: string;
  /** The agent CLI's version, or skillsmith's for agents that are part of it. */
  readonly agentVersion: string;
  readonly skillsmithVersion: string;
  readonly sandbox: string;
  readonly replayPatch?: string;
}

export async function runFingerprint(
  determinants: RunDeterminants,
  digests: FolderDigests,
): Promise<RunFingerprint> {
  const { configuration, skill, requirement, base } = determinants;
  const verifier = requirement.verifier;
  const limits = skill.environment?.limits;
  const solution = requirement.solution;
  let solutionDigest: string | undefined;
  if (solution !== undefined) {
    solutionDigest =
      solution.kind === "patch"
        ? sha256(await readFile(solution.path, "utf8"))
        : `${solution.kind}:${await digests.of(solution.path)}`;
  }
  return fingerprintOf({
    skillsmith: determinants.skillsmithVersion,
    base: {
      digest: base.digest,
      commit: base.commit,
      ...(base.environment === undefined ? {} : { image: base.environment.image }),
    },
    agent: {
      harness: determinants.harness,
      kind: configuration.agent,
      version: determinants.agentVersion,
      model: determinants.modelSpec,
      limits: configuration.limits,
      skillLimits: skill.agentLimits ?? null,
      ...(determinants.replayPatch === undefined
        ? {}
        : { replay: sha256(determinants.replayPatch) }),
    },
    requirement: {
      id: requirement.id,
      text: requirement.raw,
      fileOperations: requirement.fileOperations,
      ...(solutionDigest === undefined ? {} : { solution: solutionDigest }),
      verifier: {
        folder: await digests.of(verifier.folder),
        command: verifier.command,
        files: verifier.files,
        mountPath: verifier.mountPath,
        cwd: verifier.cwd,
        timeoutSeconds: verifier.timeoutSeconds ?? limits?.commandTimeoutSeconds ?? null,
        junit: verifier.junit ?? null,
        rewardFile: verifier.rewardFile ?? null,
      },
    },
    environmentLimits: limits ?? null,
    sandbox: determinants.sandbox,
    skills: await Promise.all(determinants.installed.map((folder) => digests.of(folder))),
  });
}
