import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { InputError } from "../../core/errors.js";
import { unlessMissing } from "../../core/fs.js";
import { fieldPrefix, parseJsonResult } from "../../core/parse.js";
import type { SandboxV1 } from "../sandbox/types.js";
import type { SetupNetwork, SetupPlan } from "../setup/detect.js";
import type { NetworkProbe, SetupNetworkChoice } from "../setup/network.js";
import type { PythonIndexConfiguration } from "../setup/package-index.js";
import type { PreparedRuntime } from "../setup/runtime.js";
import type { TestTimeInstall } from "../setup/test-time-installs.js";
import { BASE_META_FORMAT, storedBaseFileSchema } from "./base-schema.js";
import type { HistoryRewrite } from "./history.js";
import type { RepositorySource } from "./source.js";

/**
 * What a prepared base is: the options that make one, the record of its setup, and its
 * `meta.json` (read back by `readStoredBase`). Kept apart from `prepare.ts` so the modules that
 * use bases (materialise, identity, validate) do not import the code that builds them.
 */

/**
 * How the base gets its dependencies: explicit commands, detection from manifests, or nothing.
 * The recipe is part of the cache key, so changing it prepares a new base.
 */
export type SetupChoice =
  | { readonly kind: "commands"; readonly commands: readonly string[] }
  | { readonly kind: "detect" }
  | { readonly kind: "none" };

export interface PrepareBaseOptions {
  /** A parsed source, or the user's text (URL, folder or bundle path). */
  readonly source: RepositorySource | string;
  /** Any revision git resolves to a commit; the full SHA it resolves to is what gets pinned. */
  readonly commit: string;
  readonly setup?: SetupChoice;
  /** Runs the setup commands (with network `host`). Required when there is anything to run. */
  readonly sandbox?: SandboxV1;
  readonly cacheDir?: string;
  /** Where tools see the workspace; default `/workspace/<repository name>`. */
  readonly workspaceMountPath?: string;
  /** Default limit of one setup step (a step may carry a smaller one); default 30 minutes. */
  readonly setupTimeoutMs?: number;
  readonly setupEnv?: Readonly<Record<string, string>>;
  /** How long to wait for another process preparing the same base. */
  readonly lockTimeoutMs?: number;
  /**
   * `on`: setup uses the network; `off`: only what is present; `auto` (default): the network
   * when the detected ecosystem's package index answers, offline otherwise.
   */
  readonly setupNetwork?: SetupNetworkChoice;
  /** Prepare a Python environment even for a non-Python repository (its verifiers run pytest). */
  readonly verifierNeedsPython?: boolean;
  /** The interpreter environments are made from; default `/usr/bin/python3`. */
  readonly pythonInterpreter?: string;
  /**
   * Installs the verifiers run at test time: setup fills the environment's caches so they are
   * served offline (part of the cache key when there are any).
   */
  readonly testTimeInstalls?: readonly TestTimeInstall[];
  /**
   * Skill folders to clear besides every agent's own (`AGENT_SKILL_DIRECTORIES`): those of the
   * harnesses registered by a program (their `skillFolders`), so a repository's skills for them
   * do not reach an arm that runs without skills. Relative, `/`-separated.
   */
  readonly skillFolders?: readonly string[];
  /**
   * Where setup's pip installs from: the user's own pip configuration and variables by default
   * (`readPythonIndexConfiguration`), so a private index or a local mirror is honoured; part of
   * the cache key when it names anything. Runs never see it.
   */
  readonly pythonIndex?: PythonIndexConfiguration;
  /** How `auto` asks whether the network is there (tests replace it). */
  readonly probeNetwork?: (language: SetupPlan["language"]) => Promise<NetworkProbe>;
  /** One line per decision and per setup step, as it happens (progress for long setups). */
  readonly onLog?: (line: string) => void;
}

/** What happened to one setup step. */
export interface SetupStepOutcome {
  readonly command: string;
  readonly why: string;
  /** `ok`; `failed` (fatal); `skipped` (an optional step failed); `fell-back` (its fallback ran). */
  readonly outcome: "ok" | "failed" | "skipped" | "fell-back";
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  /** The last lines of the step's output. */
  readonly outputTail: string;
  /** The fallback that ran, when this step failed and had one. */
  readonly fallback?: SetupStepOutcome;
}

/** The record of a base's setup: where it ran, with or without network, and each step. */
export interface SetupReport {
  readonly network: SetupNetwork;
  /** Why that network mode (the flag, or the probe's answer). */
  readonly networkReason: string;
  readonly target: "tree" | "image" | "none";
  readonly steps: readonly SetupStepOutcome[];
  readonly durationMs: number;
  /** The interpreter the environment was made from, with its version, when there is one. */
  readonly interpreter?: string;
  /** Notes from an image-building backend (fallback images, what was built). */
  readonly notes: readonly string[];
}

/** A cached, read-only, fully prepared checkout from which run workspaces are materialised. */
export interface PreparedBase {
  readonly key: string;
  /** The folder holding the checkout (`tree/`) and `meta.json`. */
  readonly root: string;
  /** The checkout itself, `.git` included. Never modify it. */
  readonly tree: string;
  readonly cacheDir: string;
  readonly repositoryName: string;
  readonly source: string;
  /** The revision the caller asked for (a short SHA, a tag...). */
  readonly requestedCommit: string;
  /** The full commit SHA it resolved to, checked out detached. */
  readonly commit: string;
  readonly workspaceMountPath: string;
  readonly setup: SetupPlan | undefined;
  /** What setup did; absent for bases prepared with `setup: none` or before setup was recorded. */
  readonly setupReport?: SetupReport;
  /**
   * How agent and verifier runs use the prepared environment (pass it to `withPreparedRuntime`);
   * absent when nothing was prepared outside the repository.
   */
  readonly runtime?: PreparedRuntime;
  /**
   * Set when the sandbox builds images (`SandboxV1.prepare`): the image to pass as
   * `SandboxExecRequest.image` for every run of this base, and what the backend decided.
   */
  readonly environment?: {
    readonly image: string;
    readonly baseImage: string;
    readonly notes: readonly string[];
  };
  /** `treeDigest` of the tree as published. */
  readonly digest: string;
  /** Agent-skill folders removed from the checkout during preparation (relative paths). */
  readonly removedSkillFolders: readonly string[];
  /**
   * Present when the repository had committed skill folders: they were removed from every commit
   * reachable from the pinned one, and HEAD is the rewritten commit `head` (same tree as the
   * checkout, same authors and messages), not `commit`.
   */
  readonly skillHistory?: HistoryRewrite;
  readonly preparedAt: string;
  /** False when this call prepared the base, true when it was already in the cache. */
  readonly reused: boolean;
}

/** What `meta.json` holds: the base without the paths of this machine's cache. */
export type StoredBase = Omit<PreparedBase, "root" | "tree" | "cacheDir" | "reused">;

/** Folder of a base (beside `tree/`) holding its prepared environment on the host. */
export const ENVIRONMENT_FOLDER = "env";

/**
 * The base published at `root`, or undefined when none is there yet (no `meta.json`, or no
 * `tree/` beside it). A `meta.json` or `tree` that is there but unreadable is a
 * `core.file-unreadable` input error naming it: taken for "not prepared", it would send every run
 * to rebuild over a cache entry it cannot replace. A `meta.json` that does not parse (damaged,
 * another program's, a later skillsmith's) is `env.base-meta-invalid` naming the file and field:
 * a base is never used on fields the file does not have.
 */
export async function readStoredBase(root: string): Promise<StoredBase | undefined> {
  const metaPath = join(root, "meta.json");
  const text = await unlessMissing(metaPath, readFile(metaPath, "utf8"));
  if (text === undefined) return undefined;
  const treePath = join(root, "tree");
  const treeStat = await unlessMissing(treePath, stat(treePath));
  if (treeStat === undefined || !treeStat.isDirectory()) return undefined;
  const parsed = parseJsonResult(storedBaseFileSchema, text);
  if (!parsed.ok) {
    throw new InputError(
      "env.base-meta-invalid",
      `not a prepared base's meta.json: ${fieldPrefix(parsed.error)}${parsed.error.message} (remove ${root} to prepare the base again)`,
      {
        file: metaPath,
        ...(parsed.error.field === undefined ? {} : { field: parsed.error.field }),
      },
      { data: { issues: parsed.error.issues } },
    );
  }
  const { format: _format, setup, ...rest } = parsed.value;
  return { ...rest, setup };
}

/** What `prepareBase` writes into `meta.json`: the stored base under its format tag. */
export function storedBaseFile(stored: StoredBase): string {
  return `${JSON.stringify({ format: BASE_META_FORMAT, ...stored }, null, 2)}\n`;
}

/** The stored base as callers see it: absolute paths into this cache. */
export function materialisedView(
  stored: StoredBase,
  root: string,
  cacheDir: string,
  reused: boolean,
): PreparedBase {
  const runtime = stored.runtime;
  return {
    ...stored,
    // meta.json names the environment folder relative to the base, so a moved cache still works.
    ...(runtime?.mount === undefined
      ? {}
      : {
          runtime: {
            ...runtime,
            mount: { ...runtime.mount, hostPath: join(root, runtime.mount.hostPath) },
          },
        }),
    root,
    tree: join(root, "tree"),
    cacheDir,
    reused,
  };
}
