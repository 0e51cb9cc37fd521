import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { InfrastructureError, InputError, UsageError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs.js";
import { acquireLock } from "../../core/lock.js";
import { cleanAgentSkillFolders } from "../../skill/install.js";
import type { SandboxV1 } from "../sandbox/types.js";
import { detectSetup, type SetupPlan } from "../setup/detect.js";
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
  readonly setupTimeoutMs?: number;
  readonly setupEnv?: Readonly<Record<string, string>>;
  /** How long to wait for another process preparing the same base. */
  readonly lockTimeoutMs?: number;
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
    const key = baseKey(source, commit, recipe, mountPath, setupTarget);
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

function baseKey(
  source: RepositorySource,
  commit: string,
  recipe: SetupChoice,
  mountPath: string,
  setupTarget: "tree" | "image",
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
        // v2: committed skill folders are removed from the history too.
        "skillsmith-base-v2",
        sourceIdentity(source),
        commit,
        canonicalRecipe,
        mountPath,
        setupTarget,
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
  const { tree, source, recipe, options } = parts;
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

  let setup: SetupPlan | undefined;
  if (recipe.kind === "commands") setup = await detectSetup(tree, { commands: recipe.commands });
  else if (recipe.kind === "detect") setup = await detectSetup(tree);
  let environment: StoredBase["environment"];
  if (options.sandbox?.prepare !== undefined) {
    // Image-based backends bake setup into an image built once per key; the host tree stays as
    // checked out and every run's workspace is mounted over the image's copy.
    const prepared = await options.sandbox.prepare({
      workspace: tree,
      workspaceMountPath: parts.mountPath,
      cacheKey: `${sourceIdentity(source)}@${commit}`,
      recipe: {
        ...(setup === undefined ? {} : { baseImage: setup.baseImage }),
        commands: setup?.commands ?? [],
      },
      network: "host",
    });
    environment = { image: prepared.image, baseImage: prepared.baseImage, notes: prepared.notes };
  } else if (setup !== undefined && setup.commands.length > 0) {
    await runSetup(tree, parts.mountPath, setup, options);
    // Setup must not smuggle skills in (e.g. a dependency that ships a .claude/skills folder).
    for (const path of await cleanAgentSkillFolders(tree)) {
      removedSkillFolders.push(path.slice(tree.length + 1));
    }
  }
  return {
    key: parts.key,
    repositoryName: parts.name,
    source: describeSource(source),
    requestedCommit: parts.requestedCommit,
    commit,
    workspaceMountPath: parts.mountPath,
    setup,
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

async function runSetup(
  tree: string,
  mountPath: string,
  setup: SetupPlan,
  options: PrepareBaseOptions,
): Promise<void> {
  if (options.sandbox === undefined) {
    throw new UsageError(
      "setup-needs-sandbox",
      `setup has ${setup.commands.length} command(s) to run but no sandbox was given to run them in`,
    );
  }
  for (const command of setup.commands) {
    const result = await options.sandbox.exec({
      command: ["sh", "-c", command],
      workspace: tree,
      workspaceMountPath: mountPath,
      network: "host",
      limits: { timeoutMs: options.setupTimeoutMs ?? 30 * 60_000 },
      ...(options.setupEnv === undefined ? {} : { env: options.setupEnv }),
    });
    if (result.exitCode !== 0 || result.timedOut) {
      const tail = `${result.stdout}\n${result.stderr}`.trim().split("\n").slice(-20).join("\n");
      throw new InfrastructureError(
        "setup-failed",
        `setup command \`${command}\` ${result.timedOut ? "timed out" : `failed with exit code ${result.exitCode}`}:\n${tail}`,
        { data: { command, exitCode: result.exitCode, timedOut: result.timedOut } },
      );
    }
  }
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
  return { ...stored, root, tree: join(root, "tree"), cacheDir, reused };
}

/** Temporary folders of a crashed preparation of this key (we hold its lock, so none is live). */
async function removeLeftovers(basesDir: string, key: string): Promise<void> {
  for (const entry of await readdir(basesDir)) {
    if (entry.startsWith(`.tmp-${key}-`)) {
      await rm(join(basesDir, entry), { recursive: true, force: true });
    }
  }
}
