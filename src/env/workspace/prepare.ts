import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { InfrastructureError, InputError, UsageError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs.js";
import { acquireLock } from "../../core/lock.js";
import { runProcess } from "../../core/process.js";
import { cleanAgentSkillFolders } from "../../skill/install.js";
import type { SandboxV1 } from "../sandbox/types.js";
import {
  DEFAULT_PYTHON,
  detectSetup,
  type SetupNetwork,
  type SetupPlan,
  type SetupStep,
  SYSTEM_PATH,
} from "../setup/detect.js";
import { type NetworkProbe, probePackageIndex, type SetupNetworkChoice } from "../setup/network.js";
import type { PreparedRuntime } from "../setup/runtime.js";
import { defaultCacheDir } from "./cache.js";
import { treeDigest } from "./digest.js";
import { git, tryGit } from "./git.js";
import { type HistoryRewrite, removeSkillFoldersFromHistory } from "./history.js";
import { sweepStaleWorkspaces } from "./materialise.js";
import {
  cloneLocation,
  describeSource,
  parseRepositorySource,
  type RepositorySource,
  repositoryName,
  sourceIdentity,
} from "./source.js";

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

type StoredBase = Omit<PreparedBase, "root" | "tree" | "cacheDir" | "reused">;

/** Folder of a base (beside `tree/`) holding its prepared environment on the host. */
const ENVIRONMENT_FOLDER = "env";
const SETUP_LOG = "setup.log";

/**
 * Setup of a base failed: `data.log` holds every step's command and output, `data.steps` the
 * outcomes, so a caller can record the failure once instead of retrying it for every run.
 */
export class SetupFailedError extends InfrastructureError {
  constructor(
    message: string,
    readonly report: SetupReport,
    readonly log: string,
  ) {
    super("setup-failed", message, { data: { log, steps: report.steps, network: report.network } });
  }
}

/** git's wording for failures of the network rather than of the user's input. */
const networkFailurePattern =
  /Could not resolve host|Connection (refused|timed out|reset)|Network is unreachable|Operation timed out|early EOF|The remote end hung up unexpectedly|(HTTP|RPC) failed|Failed to connect|Couldn't connect to server/i;

const fullShaPattern = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * Prepare a base once per (repository, commit, setup recipe): clone, check out the commit
 * detached, strip every ref and object not reachable from it (so later history — possibly the
 * reference solution — is not visible to agents), remove agent-skill folders, run setup, then
 * publish atomically by renaming a finished temporary folder into place. A lock file makes
 * concurrent callers (processes or promises) wait for the one doing the work; a crash leaves
 * only a temporary folder, which the next holder of the lock removes.
 */
export async function prepareBase(options: PrepareBaseOptions): Promise<PreparedBase> {
  const source =
    typeof options.source === "string"
      ? await parseRepositorySource(options.source)
      : options.source;
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  const basesDir = join(cacheDir, "bases");
  await mkdir(basesDir, { recursive: true });
  // Workspaces left mounted by killed runs would otherwise pile up in this cache.
  await sweepStaleWorkspaces(join(cacheDir, "workspaces"));
  const name = repositoryName(source);
  const recipe = options.setup ?? { kind: "none" };
  const mountPath = options.workspaceMountPath ?? `/workspace/${name}`;

  // A full SHA names the commit already; anything shorter must be resolved against the
  // repository before the cache key is known, which costs a clone.
  let scratch: string | undefined;
  let commit: string;
  if (fullShaPattern.test(options.commit)) {
    commit = options.commit;
  } else {
    scratch = join(basesDir, `.resolve-${randomBytes(6).toString("hex")}`);
    try {
      await cloneInto(source, scratch);
      commit = await resolveCommit(scratch, source, options.commit);
    } catch (error) {
      await rm(scratch, { recursive: true, force: true });
      throw error;
    }
  }
  try {
    const setupTarget = options.sandbox?.prepare === undefined ? "tree" : "image";
    const key = baseKey(source, commit, recipe, mountPath, setupTarget, {
      network: options.setupNetwork ?? "auto",
      verifierNeedsPython: options.verifierNeedsPython === true,
      toolchain:
        recipe.kind === "none"
          ? "none"
          : setupTarget === "image"
            ? "image"
            : // Only the unsafe pass-through places the environment differently (at its host path);
              // a caller without a sandbox must find what a sandboxed caller prepared.
              `${options.sandbox?.kind === "unsafe" ? "host-path" : "fixed-path"} ${await interpreterIdentity(options.pythonInterpreter ?? DEFAULT_PYTHON)}`,
    });
    const root = join(basesDir, key);
    const existing = await readStoredBase(root);
    if (existing !== undefined) return materialisedView(existing, root, cacheDir, true);

    const lock = await acquireLock(join(basesDir, `${key}.lock`), {
      ...(options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs }),
      done: async () => (await readStoredBase(root)) !== undefined,
    });
    if (!lock.acquired) {
      const published = await readStoredBase(root);
      if (published === undefined)
        throw new InfrastructureError("base-vanished", `base ${root} disappeared`);
      return materialisedView(published, root, cacheDir, true);
    }
    try {
      // Another process may have published between our check and taking the lock.
      const published = await readStoredBase(root);
      if (published !== undefined) return materialisedView(published, root, cacheDir, true);
      await removeLeftovers(basesDir, key);
      const temporary = join(basesDir, `.tmp-${key}-${randomBytes(6).toString("hex")}`);
      try {
        const tree = join(temporary, "tree");
        if (scratch === undefined) {
          await cloneInto(source, tree);
        } else {
          await mkdir(temporary, { recursive: true });
          await rename(scratch, tree);
          scratch = undefined;
        }
        const stored = await buildBase({
          tree,
          source,
          commit,
          requestedCommit: options.commit,
          recipe,
          mountPath,
          name,
          key,
          options,
        });
        await writeFileAtomic(join(temporary, "meta.json"), `${JSON.stringify(stored, null, 2)}\n`);
        await rename(temporary, root);
        return materialisedView(stored, root, cacheDir, false);
      } catch (error) {
        await rm(temporary, { recursive: true, force: true });
        throw error;
      }
    } finally {
      await lock.release();
    }
  } finally {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  }
}

const interpreters = new Map<string, Promise<string>>();

/** `path` and its `--version` (cached per process): a different interpreter is another base. */
function interpreterIdentity(path: string): Promise<string> {
  let identity = interpreters.get(path);
  if (identity === undefined) {
    identity = runProcess(path, ["--version"], { timeoutMs: 10_000 }).then((result) =>
      result.exitCode === 0
        ? `${path} ${`${result.stdout}${result.stderr}`.trim()}`
        : `${path} (missing)`,
    );
    interpreters.set(path, identity);
  }
  return identity;
}

function baseKey(
  source: RepositorySource,
  commit: string,
  recipe: SetupChoice,
  mountPath: string,
  setupTarget: "tree" | "image",
  environment: { network: SetupNetworkChoice; verifierNeedsPython: boolean; toolchain: string },
): string {
  // The mount path is part of the key because setup may bake absolute paths (virtualenvs), and
  // the setup target because an image-based sandbox leaves setup out of the host tree.
  const canonicalRecipe =
    recipe.kind === "commands"
      ? { kind: recipe.kind, commands: [...recipe.commands] }
      : { kind: recipe.kind };
  const hash = createHash("sha256")
    .update(
      JSON.stringify([
        // v3: committed skill folders are removed from the history too; v2: environments
        // outside the tree, offline preparation, the network mode and the toolchain in the key.
        "skillsmith-base-v3",
        sourceIdentity(source),
        commit,
        canonicalRecipe,
        mountPath,
        setupTarget,
        environment,
      ]),
    )
    .digest("hex");
  return `${repositoryName(source)}-${commit.slice(0, 12)}-${hash.slice(0, 16)}`;
}

async function cloneInto(source: RepositorySource, target: string): Promise<void> {
  const location = cloneLocation(source);
  if (source.kind === "bundle") {
    const verified = await tryGit(["bundle", "list-heads", location]);
    if (verified.exitCode !== 0) {
      throw new InputError(
        "invalid-bundle",
        `not a readable git bundle: ${verified.stderr.trim() || "git bundle list-heads failed"}`,
        { file: location },
      );
    }
  }
  const cloned = await tryGit(["clone", "--quiet", "--no-checkout", "--", location, target]);
  if (cloned.exitCode !== 0) {
    if (networkFailurePattern.test(cloned.stderr)) {
      throw new InfrastructureError(
        "clone-unreachable",
        `cannot reach repository ${describeSource(source)}: ${cloned.stderr.trim()}`,
        { retryable: true, data: { stderr: cloned.stderr } },
      );
    }
    throw new InputError(
      "clone-failed",
      `cannot clone repository ${describeSource(source)}: ${cloned.stderr.trim()}`,
      { field: "repository" },
      { data: { stderr: cloned.stderr } },
    );
  }
}

async function resolveCommit(
  tree: string,
  source: RepositorySource,
  commit: string,
): Promise<string> {
  const resolve = async () => {
    const result = await tryGit(["rev-parse", "--verify", "--quiet", `${commit}^{commit}`], {
      cwd: tree,
    });
    return result.exitCode === 0 ? result.stdout.trim() : undefined;
  };
  let resolved = await resolve();
  if (resolved === undefined && source.kind !== "bundle" && /^[0-9a-f]{7,64}$/.test(commit)) {
    // A commit no branch points at is not cloned; servers that allow it can still send it.
    await tryGit(["fetch", "--quiet", "origin", commit], { cwd: tree });
    resolved = await resolve();
  }
  if (resolved === undefined) {
    throw new InputError(
      "unknown-commit",
      `commit "${commit}" does not exist in repository ${describeSource(source)} (expected a commit SHA or a revision that resolves to a commit)`,
      { field: "commit" },
      { data: { repository: describeSource(source), commit } },
    );
  }
  return resolved;
}

async function buildBase(parts: {
  tree: string;
  source: RepositorySource;
  commit: string;
  requestedCommit: string;
  recipe: SetupChoice;
  mountPath: string;
  name: string;
  key: string;
  options: PrepareBaseOptions;
}): Promise<StoredBase> {
  const { tree, source } = parts;
  const commit = await resolveCommit(tree, source, parts.commit);
  await git(["-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit], {
    cwd: tree,
  });
  await git(["clean", "-ffdxq"], { cwd: tree });
  await pruneToCommit(tree);
  const removedSkillFolders = (await cleanAgentSkillFolders(tree)).map((path) =>
    path.slice(tree.length + 1),
  );
  // Skills the repository committed leave its history too, or `git checkout -- .` and `git log
  // -p` would hand them to the agent; the old objects go with a second prune.
  const skillHistory = await removeSkillFoldersFromHistory(tree, dirname(tree));
  if (skillHistory.commitsWithSkills > 0) await pruneToCommit(tree);

  const built = await runSetupOf({ ...parts, commit });
  const { setup, environment, setupReport, runtime } = built;
  removedSkillFolders.push(...built.removedSkillFolders);
  return {
    key: parts.key,
    repositoryName: parts.name,
    source: describeSource(source),
    requestedCommit: parts.requestedCommit,
    commit,
    workspaceMountPath: parts.mountPath,
    setup,
    ...(setupReport === undefined ? {} : { setupReport }),
    ...(runtime === undefined ? {} : { runtime }),
    ...(environment === undefined ? {} : { environment }),
    digest: await treeDigest(tree),
    removedSkillFolders,
    ...(skillHistory.commitsWithSkills === 0 ? {} : { skillHistory }),
    preparedAt: new Date().toISOString(),
  };
}

/**
 * Keep only what HEAD (the pinned commit) reaches: delete all refs and reflogs, drop the remote,
 * and repack into one pack. Besides hiding later history, a single pack makes every copy of the
 * base cheaper than thousands of loose objects would.
 */
async function pruneToCommit(tree: string): Promise<void> {
  const refs = (await git(["for-each-ref", "--format=%(refname)"], { cwd: tree }))
    .split("\n")
    .filter((line) => line !== "");
  // One transaction, not one git process per ref: a repository with hundreds of tags
  // (fastapi: ~600) spent most of its preparation starting git. --no-deref deletes a symbolic
  // ref (origin/HEAD) itself, not its target a second time.
  if (refs.length > 0) {
    await git(["update-ref", "--no-deref", "--stdin"], {
      cwd: tree,
      input: refs.map((ref) => `delete ${ref}\n`).join(""),
    });
  }
  await tryGit(["remote", "remove", "origin"], { cwd: tree });
  await git(["reflog", "expire", "--expire=now", "--all"], { cwd: tree });
  await git(["repack", "-a", "-d", "-q"], { cwd: tree });
  await git(["prune", "--expire=now"], { cwd: tree });
  // Objects borrowed from the source by a local clone (alternates) would tie the base to it.
  await rm(join(tree, ".git", "objects", "info", "alternates"), { force: true });
}

interface SetupParts {
  tree: string;
  source: RepositorySource;
  commit: string;
  recipe: SetupChoice;
  mountPath: string;
  options: PrepareBaseOptions;
}

interface BuiltSetup {
  setup: SetupPlan | undefined;
  setupReport?: SetupReport;
  runtime?: PreparedRuntime;
  environment?: StoredBase["environment"];
  removedSkillFolders: string[];
}

/**
 * Detect (or take) the setup plan, decide the network, and run it: as an image layer when the
 * sandbox builds images, else step by step in the sandbox over the tree, with the environment
 * folder beside the tree mounted read-write at its fixed path.
 */
async function runSetupOf(parts: SetupParts): Promise<BuiltSetup> {
  const { tree, recipe, options } = parts;
  if (recipe.kind === "none") return { setup: undefined, removedSkillFolders: [] };
  const log = (line: string) => options.onLog?.(line);
  const target = options.sandbox?.prepare === undefined ? "tree" : "image";
  const unsafe = options.sandbox?.kind === "unsafe";
  // The folder beside the tree; renamed into place with it, so the final path is known now.
  const environmentHost = join(tree, "..", ENVIRONMENT_FOLDER);
  const detectOptions = {
    ...(recipe.kind === "commands" ? { commands: recipe.commands } : {}),
    workspaceMountPath: parts.mountPath,
    ...(options.pythonInterpreter === undefined
      ? {}
      : { pythonInterpreter: options.pythonInterpreter }),
    ...(options.verifierNeedsPython === true ? { verifierNeedsPython: true } : {}),
    target: target === "image" ? ("image" as const) : ("host" as const),
    // Without a mount namespace the environment cannot appear at a fixed path: it is used where
    // it is on the host.
    ...(unsafe ? { environmentPath: environmentHost } : {}),
  };
  const choice = options.setupNetwork ?? "auto";
  const first = await detectSetup(tree, { ...detectOptions, network: "online" });
  let network: SetupNetwork;
  let networkReason: string;
  if (choice === "on") {
    network = "online";
    networkReason = "--setup-network: setup uses the network";
  } else if (choice === "off") {
    network = "offline";
    networkReason = "--no-setup-network: setup uses only what is already present";
  } else {
    const probe = await (options.probeNetwork ?? probePackageIndex)(first.language);
    network = probe.reachable ? "online" : "offline";
    networkReason = `${probe.detail}: setup runs ${network}`;
  }
  const setup =
    network === "online" ? first : await detectSetup(tree, { ...detectOptions, network });
  log(`setup ${network} (${networkReason})`);
  for (const reason of setup.reasons) log(`  ${reason}`);
  const started = performance.now();

  if (target === "image" && options.sandbox?.prepare !== undefined) {
    // Image-based backends bake setup into an image built once per key; the host tree stays as
    // checked out and every run's workspace is mounted over the image's copy.
    const path = [...(setup.environment?.binPaths ?? []), SYSTEM_PATH].join(":");
    for (const step of setup.steps) log(`  $ ${step.command}   (image layer)`);
    const prepared = await options.sandbox.prepare({
      workspace: tree,
      workspaceMountPath: parts.mountPath,
      cacheKey: `${sourceIdentity(parts.source)}@${parts.commit}`,
      recipe: {
        baseImage: setup.baseImage,
        commands: setup.steps.map(imageCommand),
        env: { ...(setup.environment?.setupEnv ?? {}), ...options.setupEnv, PATH: path },
      },
      network: network === "online" ? "host" : "none",
      onLog: (line) => log(line.trimEnd()),
    });
    log(`  image ${prepared.image} on ${prepared.baseImage}`);
    for (const note of prepared.notes) log(`  ${note}`);
    return {
      setup,
      setupReport: {
        network,
        networkReason,
        target: "image",
        steps: [],
        durationMs: performance.now() - started,
        notes: prepared.notes,
      },
      ...(setup.environment === undefined
        ? {}
        : {
            runtime: {
              binPaths: setup.environment.binPaths,
              env: setup.environment.runEnv,
            },
          }),
      environment: { image: prepared.image, baseImage: prepared.baseImage, notes: prepared.notes },
      removedSkillFolders: [],
    };
  }

  const outcomes: SetupStepOutcome[] = [];
  const interpreter =
    setup.python === undefined ? undefined : await interpreterIdentity(setup.python.interpreter);
  const report = (): SetupReport => ({
    network,
    networkReason,
    target: "tree",
    steps: [...outcomes],
    durationMs: performance.now() - started,
    ...(interpreter === undefined ? {} : { interpreter }),
    notes: [],
  });
  if (setup.steps.length > 0) {
    if (options.sandbox === undefined) {
      throw new UsageError(
        "setup-needs-sandbox",
        `setup has ${setup.steps.length} command(s) to run but no sandbox was given to run them in`,
      );
    }
    if (setup.environment !== undefined) await mkdir(environmentHost, { recursive: true });
    for (const step of setup.steps) {
      log(`  $ ${step.command}`);
      const outcome = await runStep(step, parts, setup, environmentHost, network, unsafe);
      outcomes.push(outcome);
      if (outcome.outcome !== "ok") {
        log(
          `  ${outcome.outcome === "failed" ? "FAILED" : outcome.outcome === "skipped" ? "optional step failed, skipped" : "failed; fallback"}: exit ${outcome.exitCode ?? "none"}${outcome.timedOut ? " (timed out)" : ""}${outcome.fallback === undefined ? "" : ` → ${outcome.fallback.outcome}`}`,
        );
      }
      if (outcome.outcome === "failed") {
        const text = formatSetupLog(report());
        // Summaries print the message's first line only: it ends with the output's last line.
        const lastLine = outcome.outputTail.trimEnd().split("\n").pop()?.trim() ?? "";
        throw new SetupFailedError(
          `setup command \`${step.command}\` ${outcome.timedOut ? "timed out" : `failed with exit code ${outcome.exitCode}`} (setup ${network})${lastLine === "" ? "" : `: ${lastLine}`}\n${outcome.outputTail}`,
          report(),
          text,
        );
      }
    }
  }
  // Setup must not smuggle skills in (e.g. a dependency that ships a .claude/skills folder).
  const removedSkillFolders = (await cleanAgentSkillFolders(tree)).map((path) =>
    path.slice(tree.length + 1),
  );
  const finalReport = report();
  await writeFileAtomic(join(tree, "..", SETUP_LOG), formatSetupLog(finalReport));
  return {
    setup,
    setupReport: finalReport,
    ...(setup.environment === undefined
      ? {}
      : {
          runtime: {
            ...(unsafe
              ? {}
              : {
                  mount: { hostPath: ENVIRONMENT_FOLDER, sandboxPath: setup.environment.path },
                }),
            binPaths: setup.environment.binPaths,
            env: setup.environment.runEnv,
          },
        }),
    removedSkillFolders,
  };
}

/** A step as one image-layer command: optional steps and fallbacks keep the build going. */
function imageCommand(step: SetupStep): string {
  const note = (what: string) =>
    `echo ${JSON.stringify(`skillsmith setup: ${what}: ${step.command}`)} >&2`;
  if (step.fallback !== undefined) {
    return `{ ${step.command}; } || { ${note("failed, running the fallback")}; ${imageCommand(step.fallback)}; }`;
  }
  if (step.optional === true)
    return `{ ${step.command}; } || ${note("optional step failed, skipped")}`;
  return step.command;
}

const OUTPUT_TAIL_LINES = 40;

async function runStep(
  step: SetupStep,
  parts: SetupParts,
  setup: SetupPlan,
  environmentHost: string,
  network: SetupNetwork,
  unsafe: boolean,
): Promise<SetupStepOutcome> {
  const { options } = parts;
  const sandbox = options.sandbox as SandboxV1;
  const environment = setup.environment;
  const timeoutMs = Math.min(
    step.timeoutSeconds === undefined ? Number.POSITIVE_INFINITY : step.timeoutSeconds * 1000,
    options.setupTimeoutMs ?? 30 * 60_000,
  );
  const result = await sandbox.exec({
    command: ["sh", "-c", step.command],
    workspace: parts.tree,
    workspaceMountPath: parts.mountPath,
    network: network === "online" ? "host" : "none",
    limits: { timeoutMs },
    env: {
      ...(environment?.setupEnv ?? {}),
      ...options.setupEnv,
      PATH: [...(environment?.binPaths ?? []), SYSTEM_PATH].join(":"),
    },
    ...(environment === undefined || unsafe
      ? {}
      : {
          extraMounts: [
            { hostPath: environmentHost, sandboxPath: environment.path, readOnly: false },
          ],
        }),
  });
  const output = `${result.stdout}\n${result.stderr}`.trim();
  const outcome: SetupStepOutcome = {
    command: step.command,
    why: step.why,
    outcome: "ok",
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    outputTail: output.split("\n").slice(-OUTPUT_TAIL_LINES).join("\n"),
  };
  if (result.exitCode === 0 && !result.timedOut) return outcome;
  if (step.fallback !== undefined) {
    const fallback = await runStep(step.fallback, parts, setup, environmentHost, network, unsafe);
    return { ...outcome, outcome: fallback.outcome === "ok" ? "fell-back" : "failed", fallback };
  }
  return { ...outcome, outcome: step.optional === true ? "skipped" : "failed" };
}

/** The setup log as a person reads it: the decision, then each step with its output. */
export function formatSetupLog(report: SetupReport): string {
  const lines = [
    `setup ${report.network} (${report.networkReason}), ${Math.round(report.durationMs)} ms`,
    ...(report.interpreter === undefined ? [] : [`interpreter: ${report.interpreter}`]),
    ...report.notes,
  ];
  const describe = (step: SetupStepOutcome, indent: string) => {
    lines.push(
      `${indent}$ ${step.command}`,
      `${indent}  # ${step.why}`,
      `${indent}  → ${step.outcome} (exit ${step.exitCode ?? "none"}${step.timedOut ? ", timed out" : ""}, ${Math.round(step.durationMs)} ms)`,
    );
    if (step.outcome !== "ok" && step.outputTail !== "") {
      lines.push(...step.outputTail.split("\n").map((line) => `${indent}  | ${line}`));
    }
    if (step.fallback !== undefined) describe(step.fallback, `${indent}  `);
  };
  for (const step of report.steps) describe(step, "");
  return `${lines.join("\n")}\n`;
}

async function readStoredBase(root: string): Promise<StoredBase | undefined> {
  const text = await readFile(join(root, "meta.json"), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const treeStat = await stat(join(root, "tree")).catch(() => undefined);
  if (treeStat === undefined || !treeStat.isDirectory()) return undefined;
  return JSON.parse(text) as StoredBase;
}

function materialisedView(
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

/** Temporary folders of a crashed preparation of this key (we hold its lock, so none is live). */
async function removeLeftovers(basesDir: string, key: string): Promise<void> {
  for (const entry of await readdir(basesDir)) {
    if (entry.startsWith(`.tmp-${key}-`)) {
      await rm(join(basesDir, entry), { recursive: true, force: true });
    }
  }
}
