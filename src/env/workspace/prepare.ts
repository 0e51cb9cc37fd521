import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { InfrastructureError, InputError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs.js";
import { acquireLock } from "../../core/lock.js";
import { AGENT_SKILL_DIRECTORIES, cleanAgentSkillFolders } from "../../skill/install.js";
import { DEFAULT_PYTHON } from "../setup/detect.js";
import type { SetupNetworkChoice } from "../setup/network.js";
import { readPythonIndexConfiguration } from "../setup/package-index.js";
import {
  materialisedView,
  type PrepareBaseOptions,
  type PreparedBase,
  readStoredBase,
  type SetupChoice,
  type StoredBase,
  storedBaseFile,
} from "./base.js";
import { cloneBundle } from "./bundle.js";
import { defaultCacheDir } from "./cache.js";
import { treeDigest } from "./digest.js";
import { git, tryGit } from "./git.js";
import { removeSkillFoldersFromHistory } from "./history.js";
import { sweepStaleWorkspaces } from "./materialise.js";
import { interpreterIdentity, runSetupOf } from "./setup-run.js";
import {
  cloneLocation,
  describeSource,
  parseRepositorySource,
  type RepositorySource,
  repositoryName,
  sourceIdentity,
} from "./source.js";

// The base's types and stored form live in base.ts, running its setup in setup-run.ts; they
// are re-exported here because callers across src/ and test/ import them from this module.
export type {
  PrepareBaseOptions,
  PreparedBase,
  SetupChoice,
  SetupReport,
  SetupStepOutcome,
} from "./base.js";
export { formatSetupLog, SetupFailedError } from "./setup-run.js";

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
export async function prepareBase(request: PrepareBaseOptions): Promise<PreparedBase> {
  const options = await withPythonIndex(request);
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
      ...installsKey(options.testTimeInstalls),
      ...pythonIndexKey(options.pythonIndex),
      extraSkillFolders: extraSkillFolders(options.skillFolders),
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
        throw new InfrastructureError("env.base-vanished", `base ${root} disappeared`);
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
        await writeFileAtomic(join(temporary, "meta.json"), storedBaseFile(stored));
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
  environment: {
    network: SetupNetworkChoice;
    verifierNeedsPython: boolean;
    toolchain: string;
    testTimeInstalls?: readonly string[];
    pythonIndex?: readonly string[];
    extraSkillFolders: readonly string[] | undefined;
  },
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

/**
 * The user's pip index configuration, read once so the key and setup agree; a base without
 * setup installs nothing and needs none.
 */
async function withPythonIndex(request: PrepareBaseOptions): Promise<PrepareBaseOptions> {
  if ((request.setup ?? { kind: "none" }).kind === "none" || request.pythonIndex !== undefined) {
    return request;
  }
  return { ...request, pythonIndex: await readPythonIndexConfiguration() };
}

/**
 * Where setup's pip installs from, for the key: a base prepared against another index (or
 * offline, before the user named a mirror) is another base. Nothing when only pip's default
 * index is configured, so the keys of bases prepared before stay the same.
 */
function pythonIndexKey(index: PrepareBaseOptions["pythonIndex"]): { pythonIndex?: string[] } {
  if (index === undefined) return {};
  const locations = [
    ...(index.indexUrl === undefined ? [] : [`index ${index.indexUrl}`]),
    ...index.extraIndexUrls.map((url) => `extra ${url}`),
    ...index.findLinks.map((url) => `links ${url}`),
    ...index.trustedHosts.map((host) => `trusted ${host}`),
  ];
  return locations.length === 0 ? {} : { pythonIndex: locations };
}

/**
 * What of the verifiers' test-time installs changes setup (the command and the requirement files
 * it may name), sorted and without duplicates; nothing when there are none, so a base of verifiers
 * that install nothing keeps the key it had before caches were filled.
 */
function installsKey(installs: PrepareBaseOptions["testTimeInstalls"]): {
  testTimeInstalls?: readonly string[];
} {
  const keys = [
    ...new Set(
      (installs ?? []).map((install) =>
        [install.installer, install.command, ...(install.requirementFiles ?? [])].join(" "),
      ),
    ),
  ].sort();
  return keys.length === 0 ? {} : { testTimeInstalls: keys };
}

/**
 * The extra skill folders a base is cleared of, sorted, for its key: a base cleared of fewer
 * folders is another base. None: undefined, so the keys of bases prepared before stay the same.
 */
function extraSkillFolders(folders: readonly string[] | undefined): string[] | undefined {
  const extra = [...new Set(folders ?? [])]
    .filter((folder) => !AGENT_SKILL_DIRECTORIES.includes(folder))
    .sort();
  return extra.length === 0 ? undefined : extra;
}

async function cloneInto(source: RepositorySource, target: string): Promise<void> {
  const location = cloneLocation(source);
  if (source.kind === "bundle") {
    const verified = await tryGit(["bundle", "list-heads", location]);
    if (verified.exitCode !== 0) {
      throw new InputError(
        "env.invalid-bundle",
        `not a readable git bundle: ${verified.stderr.trim() || "git bundle list-heads failed"}`,
        { file: location },
      );
    }
  }
  const cloned =
    source.kind === "bundle"
      ? await cloneBundle(location, target)
      : await tryGit(["clone", "--quiet", "--no-checkout", "--", location, target]);
  if (cloned.exitCode !== 0) {
    if (networkFailurePattern.test(cloned.stderr)) {
      throw new InfrastructureError(
        "env.clone-unreachable",
        `cannot reach repository ${describeSource(source)}: ${cloned.stderr.trim()}`,
        { retryable: true, data: { stderr: cloned.stderr } },
      );
    }
    throw new InputError(
      "env.clone-failed",
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
      "env.unknown-commit",
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
  const extraFolders = parts.options.skillFolders ?? [];
  const removedSkillFolders = (await cleanAgentSkillFolders(tree, extraFolders)).map((path) =>
    path.slice(tree.length + 1),
  );
  // Skills the repository committed leave its history too, or `git checkout -- .` and `git log
  // -p` would hand them to the agent; the old objects go with a second prune.
  const skillHistory = await removeSkillFoldersFromHistory(tree, dirname(tree), extraFolders);
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

/** Temporary folders of a crashed preparation of this key (we hold its lock, so none is live). */
async function removeLeftovers(basesDir: string, key: string): Promise<void> {
  for (const entry of await readdir(basesDir)) {
    if (entry.startsWith(`.tmp-${key}-`)) {
      await rm(join(basesDir, entry), { recursive: true, force: true });
    }
  }
}
