/**
 * Skills from git: parse a source (`owner/repo[@ref]`, any git URL or local repository path,
 * `[@ref]`), resolve the ref to a commit, and check that commit out into a cache through the
 * system `git` (no library: git already speaks every transport and credential helper users have
 * configured). A checkout is keyed by URL and commit, so it is made once and reused.
 */

import { createHash } from "node:crypto";
import { lstat, mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { isAbsolute, join, relative, resolve } from "node:path";
import { InfrastructureError, InputError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import { runProcess } from "../core/process.js";
import { walkSkillFolder } from "./files.js";
import { parseSkillMarkdown, SKILL_FILE_NAME } from "./parse.js";

export interface SkillSource {
  /** What the user wrote, without the ref (`owner/repo`, a URL, a path). */
  readonly source: string;
  /** What git clones. */
  readonly url: string;
  /** The requested branch, tag or commit; undefined means the remote's default branch. */
  readonly ref: string | undefined;
  readonly kind: "github" | "git";
}

const GITHUB_SHORTHAND = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/;

/**
 * Parse `owner/repo[@ref]` (a GitHub repository), a git URL (`https://`, `http://`, `ssh://`,
 * `git://`, `file://`, `git@host:path`) or a local path, each with an optional `@ref` (or
 * `#ref`) after the last `/`. `user@host` in a URL is not a ref.
 */
export function parseSkillSource(spec: string, cwd = process.cwd()): SkillSource {
  const trimmed = spec.trim();
  if (trimmed === "")
    throw new InputError("skill.source-empty", "no skill source given", { field: "source" });
  const lastSlash = Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf(":"));
  const hash = trimmed.lastIndexOf("#");
  const at = trimmed.lastIndexOf("@");
  const refAt = hash > lastSlash ? hash : at > lastSlash ? at : -1;
  const base = refAt === -1 ? trimmed : trimmed.slice(0, refAt);
  const ref = refAt === -1 ? undefined : trimmed.slice(refAt + 1);
  if (ref !== undefined && !/^[\w./-]+$/.test(ref))
    throw new InputError(
      "skill.source-ref-invalid",
      `"${ref}" is not a branch, tag or commit name`,
      {
        field: "source",
      },
    );
  if (ref !== undefined && (ref.startsWith("-") || ref.includes("..")))
    throw new InputError("skill.source-ref-invalid", `"${ref}" is not a safe ref name`, {
      field: "source",
    });
  const shorthand = GITHUB_SHORTHAND.exec(base);
  if (shorthand !== null && !base.startsWith(".") && !isAbsolute(base)) {
    const repository = (shorthand[2] ?? "").replace(/\.git$/, "");
    return {
      source: `${shorthand[1]}/${repository}`,
      url: `https://github.com/${shorthand[1]}/${repository}.git`,
      ref,
      kind: "github",
    };
  }
  if (/^(https?|ssh|git|file):\/\//i.test(base) || /^[\w.-]+@[\w.-]+:/.test(base)) {
    if (base.startsWith("-"))
      throw new InputError("skill.source-invalid", "a source may not start with -", {
        field: "source",
      });
    return { source: base, url: base, ref, kind: "git" };
  }
  if (base.startsWith("/") || base.startsWith("./") || base.startsWith("../") || base === ".") {
    const path = resolve(cwd, base);
    return { source: path, url: path, ref, kind: "git" };
  }
  throw new InputError(
    "skill.source-invalid",
    `"${spec}" is neither owner/repo nor a git URL nor a path (start local paths with ./ or /)`,
    { field: "source" },
  );
}

export interface GitOptions {
  /** The cache folder checkouts go to (`$XDG_CACHE_HOME/skillsmith/git` by default in the CLI). */
  readonly cacheDirectory: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Per git command; the whole process tree is killed past it. */
  readonly timeoutMs?: number;
}

/** Default time limit of one git command (a clone of a large repository can take a while). */
export const GIT_TIMEOUT_MS = 300_000;

async function git(args: readonly string[], options: GitOptions, cwd?: string): Promise<string> {
  const result = await runProcess(
    "git",
    // Hooks and templates of the cache are not the user's; prompts would hang a CLI run.
    ["-c", "core.hooksPath=/dev/null", "-c", "advice.detachedHead=false", ...args],
    {
      ...(cwd === undefined ? {} : { cwd }),
      env: { ...(options.env ?? process.env), GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "echo" },
      timeoutMs: options.timeoutMs ?? GIT_TIMEOUT_MS,
    },
  );
  if (result.spawnError !== undefined)
    throw new InfrastructureError("skill.git-missing", "git is not installed or not on PATH", {
      cause: result.spawnError,
    });
  if (result.timedOut)
    throw new InfrastructureError(
      "skill.git-timeout",
      `git ${args[0]} took longer than ${(options.timeoutMs ?? GIT_TIMEOUT_MS) / 1000} s`,
      {
        retryable: true,
      },
    );
  if (result.exitCode !== 0)
    throw new InputError(
      "skill.git-failed",
      `git ${args
        .filter((arg) => !arg.startsWith("-"))
        .slice(0, 2)
        .join(" ")} failed: ${result.stderr.trim().split("\n").slice(-3).join(" ")}`,
      {
        field: "source",
      },
    );
  return result.stdout;
}

const FULL_COMMIT = /^[0-9a-f]{40}$/;

/** The commit `ref` (or the default branch) points to on the remote, without cloning. */
export async function resolveRemoteCommit(
  source: SkillSource,
  options: GitOptions,
): Promise<string> {
  if (source.ref !== undefined && FULL_COMMIT.test(source.ref)) return source.ref;
  const wanted = source.ref ?? "HEAD";
  const output = await git(["ls-remote", "--", source.url, wanted], options);
  const rows = output
    .split("\n")
    .filter((row) => row.trim() !== "")
    .map((row) => row.split("\t") as [string, string]);
  // A tag's peeled commit (`refs/tags/v1^{}`) wins over the tag object.
  const exact =
    rows.find(([, name]) => name === `refs/tags/${wanted}^{}`) ??
    rows.find(([, name]) => name === wanted || name === `refs/heads/${wanted}`) ??
    rows.find(([, name]) => name === `refs/tags/${wanted}`) ??
    rows[0];
  if (exact === undefined)
    throw new InputError(
      "skill.git-ref-missing",
      `${source.url} has no branch or tag "${wanted}"`,
      {
        field: "source",
      },
    );
  return exact[0];
}

function cacheKey(url: string): string {
  return createHash("sha256").update(url).digest("hex").slice(0, 16);
}

/**
 * A checkout of `commit` of `source` in the cache (made once, then reused): a shallow fetch of
 * that commit, falling back to a full fetch for servers that refuse fetching a commit by id.
 */
export async function checkoutCommit(
  source: SkillSource,
  commit: string,
  options: GitOptions,
): Promise<string> {
  const folder = join(options.cacheDirectory, cacheKey(source.url), commit);
  const marker = await unlessMissing(folder, lstat(join(folder, ".git")));
  if (marker !== undefined) return folder;
  await mkdir(join(options.cacheDirectory, cacheKey(source.url)), { recursive: true });
  const staging = `${folder}.partial-${process.pid}-${Date.now()}`;
  await rm(staging, { recursive: true, force: true });
  try {
    await git(["init", "-q", staging], options);
    try {
      await git(["fetch", "-q", "--depth", "1", "--", source.url, commit], options, staging);
    } catch {
      // Many servers refuse to fetch an unadvertised commit by id; fetch the branches instead
      // (a real failure fails that fetch too, and is thrown from there).
      await git(
        ["fetch", "-q", "--tags", "--", source.url, "+refs/heads/*:refs/remotes/origin/*"],
        options,
        staging,
      );
    }
    await git(["checkout", "-q", "--detach", commit], options, staging);
    const head = (await git(["rev-parse", "HEAD"], options, staging)).trim();
    if (head !== commit)
      throw new InfrastructureError(
        "skill.git-checkout-mismatch",
        `checked out ${head}, wanted ${commit}`,
      );
    await rename(staging, folder).catch(async (error: unknown) => {
      // Another process made the same checkout first; theirs is as good as ours.
      if ((await unlessMissing(folder, lstat(join(folder, ".git")))) === undefined) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return folder;
}

export interface FoundSkill {
  readonly name: string;
  /** Relative to the repository root, `/`-separated; "" for a skill at the root. */
  readonly path: string;
  readonly folder: string;
}

/** Folders the skill search does not enter. */
const NOT_SEARCHED: ReadonlySet<string> = new Set([
  ".git",
  "node_modules",
  ".venv",
  "dist",
  "build",
]);
const MAX_SEARCH_DEPTH = 5;

/**
 * The skills of a checkout: every folder holding a `SKILL.md` (the root, `skills/<name>`,
 * `.claude/skills/<name>`, …) down to 5 levels, not inside another skill. Names come from the
 * frontmatter, or the folder when the frontmatter has none (validation reports that later).
 */
export async function findSkillsInCheckout(root: string): Promise<FoundSkill[]> {
  const found: FoundSkill[] = [];
  async function visit(folder: string, depth: number): Promise<void> {
    const entries = (await unlessMissing(folder, readdir(folder, { withFileTypes: true }))) ?? [];
    if (entries.some((entry) => entry.name === SKILL_FILE_NAME && entry.isFile())) {
      const skillFile = join(folder, SKILL_FILE_NAME);
      const text = (await unlessMissing(skillFile, readFile(skillFile, "utf8"))) ?? "";
      const parsed = parseSkillMarkdown(text, skillFile);
      const declared = parsed.frontmatter?.name;
      const path = relative(root, folder).split("\\").join("/");
      found.push({
        name: typeof declared === "string" ? declared : (path.split("/").at(-1) ?? path),
        path,
        folder,
      });
      return;
    }
    if (depth >= MAX_SEARCH_DEPTH) return;
    for (const entry of entries.sort((left, right) => (left.name < right.name ? -1 : 1))) {
      if (!entry.isDirectory() || NOT_SEARCHED.has(entry.name)) continue;
      await visit(join(folder, entry.name), depth + 1);
    }
  }
  await visit(root, 0);
  return found;
}

/**
 * SHA-256 over a skill's files, as `sha256:<hex>`: for each file in path order, its path, its
 * executable bit and the SHA-256 of its bytes, one line each. The same tree hashes the same
 * wherever it lies; any change to a file's bytes, name or executable bit changes it.
 */
export async function skillContentHash(folder: string): Promise<string> {
  const tree = await walkSkillFolder(folder, folder);
  const hash = createHash("sha256");
  for (const entry of tree.entries) {
    if (entry.kind !== "file") continue;
    const bytes = await readFile(join(folder, entry.path));
    const mode = (await stat(join(folder, entry.path))).mode & 0o111 ? "x" : "-";
    hash.update(`${entry.path}\0${mode}\0${createHash("sha256").update(bytes).digest("hex")}\n`);
  }
  return `sha256:${hash.digest("hex")}`;
}
