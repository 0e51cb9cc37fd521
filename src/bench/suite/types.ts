import type { Requirement } from "./requirement.js";
import type { AgentLimits, Configuration, EnvironmentSpec, SuiteProtocol } from "./schema.js";

/** One problem of a suite folder. A suite with any `error` cannot run. */
export interface SuiteProblem {
  /** The file or folder the problem is about (the suite folder joined with its relative path). */
  readonly path: string;
  readonly line?: number;
  readonly field?: string;
  readonly message: string;
  readonly severity: "error" | "warning";
}

export type SuiteSetupChoice =
  | { readonly kind: "detect" }
  | { readonly kind: "none" }
  | { readonly kind: "commands"; readonly commands: readonly string[] };

export type RepositorySource =
  | { readonly kind: "url"; readonly url: string }
  | { readonly kind: "path"; readonly path: string }
  | { readonly kind: "bundle"; readonly path: string };

export interface SuiteRepository {
  readonly source: RepositorySource;
  readonly commit: string;
  /** Folder name of the repository (from `name`, else the URL or path without `.git`/`.bundle`). */
  readonly name: string;
  /** Explicit setup commands (empty when setup is detected or none). */
  readonly setup: string[];
  /** How the environment is prepared: detected, none, or the explicit commands. */
  readonly setupChoice: SuiteSetupChoice;
  /** Where the repository is visible to the agent and the verifier; `/workspace/<name>` by default. */
  readonly mountPath: string;
}

export interface SuiteEnvironment extends Omit<EnvironmentSpec, "dockerfile"> {
  /** Absolute path of the Dockerfile, when one is given. */
  readonly dockerfile?: string;
}

export interface SuiteVerifier {
  readonly command: string;
  /** Absolute path of the requirement's `verifier/` folder. */
  readonly folder: string;
  /** Files of the verifier, relative to `folder`; all of them exist. */
  readonly files: string[];
  /** Where `folder` is placed in the environment; `/verifier` by default. */
  readonly mountPath: string;
  /** Where `command` runs; `mountPath` by default. */
  readonly cwd: string;
  readonly timeoutSeconds?: number;
  readonly junit?: string;
  readonly rewardFile?: string;
  /** `reward` when the reward file is the outcome (Harbor); see `verifierFileSchema`. */
  readonly scoring?: "checks" | "reward";
  /** Container tasks: the user the command runs as; the image's `USER` when absent. */
  readonly user?: string;
  readonly source?: Readonly<Record<string, unknown>>;
}

/**
 * A known-good answer to a requirement, used as the verifier's positive control and by the
 * `oracle` agent: a unified diff applied at the repository root, a folder of files copied over
 * the workspace, or a script (`solve.sh`, Harbor style) run in the workspace with its folder
 * mounted at `/solution`.
 */
export type ReferenceSolution =
  | { readonly kind: "patch"; readonly path: string }
  | { readonly kind: "files"; readonly path: string }
  | { readonly kind: "script"; readonly path: string; readonly entry: string };

export interface SuiteRequirement extends Requirement {
  /** Absolute path of the requirement folder. */
  readonly folder: string;
  readonly verifier: SuiteVerifier;
  readonly solution?: ReferenceSolution;
}

export interface SuiteSkill {
  readonly id: string;
  /** Absolute path of `skills/<id>/`. */
  readonly folder: string;
  /** Absolute paths of the Agent Skills folders installed in the with-skill arm. */
  readonly skillFolders: string[];
  /** Further versions of the skill, each its own arm `variant:<name>`: name → absolute folders. */
  readonly variants?: Readonly<Record<string, readonly string[]>>;
  /**
   * Distractor skills: absolute Agent Skills folders installed in every arm (`without` included)
   * beside the arm's own, so the arms differ only by the skill under test.
   */
  readonly distractors?: readonly string[];
  readonly repository?: SuiteRepository;
  readonly environment?: SuiteEnvironment;
  readonly agentLimits?: AgentLimits;
  readonly source?: Readonly<Record<string, unknown>>;
  readonly requirements: SuiteRequirement[];
  /**
   * True when `requirements` holds only a selection of the skill's requirements (`--requirement`,
   * a resumed run's open ones): its environment is still prepared for every requirement the suite
   * gives it (`everyRequirement`), so a check and every later selection share one prepared base
   * and the measurements cached for it.
   */
  readonly selectedRequirementsOnly?: true;
}

export interface Suite {
  /** Absolute path of the suite folder. */
  readonly root: string;
  readonly format: string;
  readonly name: string;
  readonly description?: string;
  readonly configurations: Configuration[];
  /** The study protocol the suite follows: defaults of its runs and reports. */
  readonly protocol?: SuiteProtocol;
  readonly skills: SuiteSkill[];
  /** Warnings found while loading; a loaded suite has no errors. */
  readonly warnings: SuiteProblem[];
}

/** A skill, or one requirement of it, left out of a suite's runnable part because of errors. */
export interface ExcludedPart {
  readonly skill: string;
  /** Absent when the whole skill is left out. */
  readonly requirement?: string;
  /** A whole skill left out: its requirement folders that the selection asks for. */
  readonly requirements?: readonly string[];
  readonly problems: readonly SuiteProblem[];
}

export interface SuiteValidation {
  readonly valid: boolean;
  /** Every problem, errors and warnings, in the order the folder was walked. */
  readonly problems: SuiteProblem[];
  /** The suite as far as it could be read; present only when `valid`. */
  readonly suite?: Suite;
  /**
   * The skills and requirements without errors, when `suite.yaml` itself is sound and at least
   * one requirement is: what can run while the rest is fixed.
   */
  readonly runnable?: Suite;
  /** What `runnable` leaves out, and why. */
  readonly excluded: readonly ExcludedPart[];
}
