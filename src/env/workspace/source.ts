import { stat } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { InputError } from "../../core/errors.js";
import { unlessMissing } from "../../core/fs.js";

/** Where a repository comes from. */
export type RepositorySource =
  /** Anything git can clone by URL: `https://`, `ssh://`, `git://`, `file://`, `user@host:path`. */
  | { readonly kind: "git-url"; readonly url: string }
  /** A repository folder on this machine (working tree or bare). */
  | { readonly kind: "local-path"; readonly path: string }
  /** A `git bundle` file. */
  | { readonly kind: "bundle"; readonly path: string };

const urlPattern = /^(?:https?|ssh|git|file|git\+ssh):\/\//;
const scpLikePattern = /^[\w.-]+@[\w.-]+:/;

/**
 * Turn a user's repository argument into a source. URLs are taken as they are; anything else is
 * a path: a folder is a local repository, a file is a bundle. A path that does not exist is an
 * input error naming it.
 */
export async function parseRepositorySource(
  text: string,
  cwd: string = process.cwd(),
): Promise<RepositorySource> {
  if (urlPattern.test(text) || scpLikePattern.test(text)) return { kind: "git-url", url: text };
  const path = resolve(cwd, text);
  // Only "nothing there" is "not found": a path that exists but cannot be read (a symlink loop,
  // no permission) is a `core.file-unreadable` input error naming it.
  const found = await unlessMissing(path, stat(path));
  if (found === undefined) {
    throw new InputError(
      "env.repository-not-found",
      `repository "${text}" is neither a URL nor an existing path (expected a git URL, a repository folder or a git bundle file)`,
      { field: "repository" },
    );
  }
  return found.isDirectory() ? { kind: "local-path", path } : { kind: "bundle", path };
}

/** A stable identity for cache keys: the kind plus the normalised location. */
export function sourceIdentity(source: RepositorySource): string {
  switch (source.kind) {
    case "git-url":
      return `git-url:${source.url.replace(/\/+$/, "")}`;
    case "local-path":
      return `local-path:${resolve(source.path)}`;
    case "bundle":
      return `bundle:${resolve(source.path)}`;
  }
}

/** What git is asked to clone. */
export function cloneLocation(source: RepositorySource): string {
  return source.kind === "git-url" ? source.url : resolve(source.path);
}

/** How the source is named in messages. */
export function describeSource(source: RepositorySource): string {
  return source.kind === "git-url" ? source.url : `${source.kind} ${resolve(source.path)}`;
}

/**
 * The repository's short name (last path segment without `.git` / `.bundle`), used for the
 * fixed mount path `/workspace/<name>`. Characters other than letters, digits, `.`, `_` and `-`
 * become `-` so the name is always a safe single path segment.
 */
export function repositoryName(source: RepositorySource): string {
  let location = source.kind === "git-url" ? source.url : resolve(source.path);
  // An scp-like `user@host:path` names the repository by its path part.
  if (source.kind === "git-url" && scpLikePattern.test(location)) {
    location = location.slice(location.indexOf(":") + 1);
  }
  const last = basename(location.replace(/[/\\]+$/, ""));
  const bare = last.replace(/\.(git|bundle)$/, "");
  const safe = bare.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[.-]+/, "");
  return safe === "" ? "repository" : safe;
}
