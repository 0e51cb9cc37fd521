/**
 * URL connectors: resources named by URL are fetched into a local folder, then handed to the
 * local connectors (article, image, video, repository) unchanged. An http(s) document is
 * streamed to disk with a wall-clock timeout and a size cap; a git repository is cloned with
 * `git clone --depth 1` at a ref. The manifest records the URL, the fetch time and the content
 * hash, so a wiki says exactly which bytes each skill was distilled from.
 *
 * One file (over 400 lines) because the document download and the git clone share the download
 * cache, its keys and its record; the HTTP deadline and messages are shared with the search
 * backends in `http.ts`.
 */
import { createHash } from "node:crypto";
import { mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import {
  InfrastructureError,
  InputError,
  type InputLocation,
  isSkillsmithError,
} from "../../core/errors.js";
import { pathExists } from "../../core/fs.js";
import { runProcess } from "../../core/process.js";
import { redactFileContent, redactKnownSecrets } from "../../model/redact.js";
import type { ResourceType } from "../meta.js";
import { httpStatusText, networkReason, RequestDeadline, secondsText } from "./http.js";

/** Where a fetched resource came from; recorded in the resource manifest. */
export interface RemoteOrigin {
  /** The URL fetched (without a `#ref` fragment). */
  readonly url: string;
  /** Repositories: the branch, tag or commit asked for; absent means the default branch. */
  readonly ref?: string;
  /** Repositories: the commit checked out. */
  readonly commit?: string;
  /** ISO time the fetch finished. */
  readonly fetchedAt: string;
  /** http(s) documents: the Content-Type the server sent. */
  readonly contentType?: string;
  /** http(s) documents: SHA-256 of the bytes received (computed while streaming). */
  readonly sha256?: string;
}

/** A resource named by URL, not fetched yet. */
export interface RemoteResourceSpec {
  /** As recorded in the manifest: the URL, with `#<ref>` when a ref was given. */
  readonly path: string;
  readonly url: ParsedResourceUrl;
  readonly type?: ResourceType;
  readonly declaredLicence?: string;
  /** Where the URL was given (a flag, or a resource list's field), for error messages. */
  readonly where: InputLocation;
}

export interface ParsedResourceUrl {
  /** What is fetched or cloned: the URL without its fragment. */
  readonly href: string;
  readonly scheme: "http" | "https" | "ssh" | "git" | "file" | "scp";
  /** The `#fragment` of a repository URL: a branch, tag or commit. */
  readonly ref?: string;
  /** The type told by the URL alone (extension, `.git`, a forge's owner/repo path, git schemes). */
  readonly impliedType?: ResourceType;
}

export interface FetchOptions {
  /** Wall-clock limit of one http(s) download, headers and body (default 30 s). */
  readonly timeoutMs?: number;
  /** Wall-clock limit of one `git clone` (default 180 s). */
  readonly cloneTimeoutMs?: number;
  /** Largest download per resource type, in bytes. */
  readonly maxBytes?: Partial<Record<Exclude<ResourceType, "repository">, number>>;
  /** Environment of `git` (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly now?: () => Date;
  readonly signal?: AbortSignal;
}

export const DEFAULT_FETCH_TIMEOUT_MS = 30_000;
export const DEFAULT_CLONE_TIMEOUT_MS = 180_000;
export const DEFAULT_MAX_BYTES: Readonly<Record<Exclude<ResourceType, "repository">, number>> = {
  article: 10 * 1024 * 1024,
  image: 25 * 1024 * 1024,
  video: 500 * 1024 * 1024,
};

const ARTICLE_EXTENSIONS = new Set([".html", ".htm", ".xhtml"]);
const VIDEO_EXTENSIONS = new Set([".mp4", ".webm", ".mkv", ".mov", ".avi"]);
const IMAGE_EXTENSIONS = new Set([".png", ".jpg", ".jpeg", ".gif", ".webp"]);
/** Hosts where `https://host/<owner>/<repo>` is a git repository. */
const FORGES = new Set(["github.com", "gitlab.com", "codeberg.org", "bitbucket.org"]);
const GIT_SCHEMES = new Set(["ssh", "git", "file", "scp"]);
/** `user@host:path`, the scp-like syntax git accepts for ssh. */
const SCP_LIKE = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)[^\s]+$/;

/** Whether a `--resources` argument (or a list entry) is a URL rather than a local path. */
export function looksLikeUrl(text: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(text) || SCP_LIKE.test(text);
}

function typeOfExtension(extension: string): ResourceType | undefined {
  if (ARTICLE_EXTENSIONS.has(extension)) return "article";
  if (VIDEO_EXTENSIONS.has(extension)) return "video";
  if (IMAGE_EXTENSIONS.has(extension)) return "image";
  return undefined;
}

/**
 * Parse a resource URL. Accepted: http, https (documents or repositories), ssh, git, file and
 * `user@host:path` (repositories). Credentials in the URL are refused: the URL is written to
 * the manifest, and a secret must not be.
 */
export function parseResourceUrl(text: string, where: InputLocation): ParsedResourceUrl {
  // `git+https://…` (the convention of npm and pip) marks any URL as a repository.
  const forcedRepository = /^git\+[a-z]+:\/\//i.test(text);
  const given = forcedRepository ? text.slice(4) : text;
  const hash = given.indexOf("#");
  const withoutFragment = hash < 0 ? given : given.slice(0, hash);
  let fragment: string | undefined;
  try {
    fragment = hash < 0 ? undefined : decodeURIComponent(given.slice(hash + 1));
  } catch (cause) {
    throw new InputError("wiki.url-invalid", `"${text}": malformed #fragment`, where, { cause });
  }
  if (SCP_LIKE.test(withoutFragment))
    return {
      href: withoutFragment,
      scheme: "scp",
      ...(fragment === undefined || fragment === "" ? {} : { ref: fragment }),
      impliedType: "repository",
    };
  let url: URL;
  try {
    url = new URL(withoutFragment);
  } catch (cause) {
    throw new InputError("wiki.url-invalid", `"${text}" is not a valid URL`, where, { cause });
  }
  const scheme = url.protocol.replace(/:$/, "");
  if (!["http", "https", "ssh", "git", "file"].includes(scheme))
    throw new InputError(
      "wiki.url-scheme",
      `"${text}": unsupported URL scheme "${scheme}:"; expected http, https (articles, images, videos, repositories), ssh, git or file (repositories)`,
      where,
    );
  if (url.password !== "")
    throw new InputError(
      "wiki.url-credentials",
      `"${url.protocol}//${url.host}${url.pathname}": the URL carries a password, which would be written to the manifest; use a git credential helper or an ssh key instead`,
      where,
    );
  if ((scheme === "http" || scheme === "https") && url.hostname === "")
    throw new InputError("wiki.url-invalid", `"${text}" has no host`, where);
  const path = url.pathname.replace(/\/+$/, "");
  let impliedType: ResourceType | undefined;
  if (forcedRepository || GIT_SCHEMES.has(scheme)) impliedType = "repository";
  else if (path.endsWith(".git")) impliedType = "repository";
  else if (FORGES.has(url.hostname) && path.split("/").filter(Boolean).length === 2)
    impliedType = "repository";
  else impliedType = typeOfExtension(extname(path).toLowerCase());
  const isRepository = impliedType === "repository";
  return {
    href: url.href,
    scheme: scheme as ParsedResourceUrl["scheme"],
    // A fragment only means a ref for repositories; for documents it is a place in the page.
    ...(isRepository && fragment !== undefined && fragment !== "" ? { ref: fragment } : {}),
    ...(impliedType === undefined ? {} : { impliedType }),
  };
}

/** The manifest path of a URL resource: its URL, plus `#<ref>` for a repository at a ref. */
export function manifestPathOf(url: ParsedResourceUrl): string {
  return url.ref === undefined ? url.href : `${url.href}#${url.ref}`;
}

const MEDIA_TYPES: readonly [RegExp, ResourceType][] = [
  [/^text\/html\b|^application\/xhtml\+xml\b/i, "article"],
  [/^image\//i, "image"],
  [/^video\//i, "video"],
];

function typeOfContent(contentType: string): ResourceType | undefined {
  return MEDIA_TYPES.find(([pattern]) => pattern.test(contentType))?.[1];
}

const EXTENSION_OF_MEDIA: Readonly<Record<string, string>> = {
  "text/html": ".html",
  "application/xhtml+xml": ".html",
  "image/png": ".png",
  "image/jpeg": ".jpg",
  "image/gif": ".gif",
  "image/webp": ".webp",
  "video/mp4": ".mp4",
  "video/webm": ".webm",
  "video/quicktime": ".mov",
  "video/x-matroska": ".mkv",
};

const DEFAULT_EXTENSION: Readonly<Record<Exclude<ResourceType, "repository">, string>> = {
  article: ".html",
  image: ".png",
  video: ".mp4",
};

/** A safe local file name for a download: the URL's last segment when its extension fits. */
function fileNameFor(
  href: string,
  type: Exclude<ResourceType, "repository">,
  contentType: string,
): string {
  const last = basename(new URL(href).pathname);
  const cleaned = last.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^\.+/, "");
  const extension = extname(cleaned).toLowerCase();
  if (cleaned !== "" && typeOfExtension(extension) === type) return cleaned;
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  const stem = cleaned === "" ? "resource" : cleaned.slice(0, cleaned.length - extension.length);
  return `${stem || "resource"}${EXTENSION_OF_MEDIA[mediaType] ?? DEFAULT_EXTENSION[type]}`;
}

interface Download {
  readonly file: string;
  readonly contentType: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly type: Exclude<ResourceType, "repository">;
}

/**
 * GET a document into `dir`, streaming with a byte cap and a wall-clock timeout covering headers
 * and body. 4xx answers are the user's URL being wrong (InputError); 5xx, timeouts and
 * unreachable hosts are infrastructure failures worth retrying later.
 */
export async function downloadDocument(
  spec: RemoteResourceSpec,
  dir: string,
  options: FetchOptions = {},
): Promise<Download> {
  const url = spec.url.href;
  const timeoutMs = options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const caps = { ...DEFAULT_MAX_BYTES, ...options.maxBytes };
  const deadline = new RequestDeadline(timeoutMs, options.signal);
  const timeout = (cause?: unknown) =>
    new InfrastructureError(
      "wiki.url-timeout",
      `GET ${url}: timed out after ${secondsText(timeoutMs)} (no complete answer)`,
      { retryable: true, data: { url, timeoutMs }, cause },
    );
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  let file: string | undefined;
  try {
    const response = await deadline.get(
      url,
      { accept: "*/*" },
      {
        timeout,
        unreachable: (cause) =>
          new InfrastructureError(
            "wiki.url-unreachable",
            `GET ${url} failed: ${networkReason(cause)}`,
            {
              retryable: true,
              data: { url },
              cause,
            },
          ),
      },
    );
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      const status = httpStatusText(response);
      if (response.status >= 400 && response.status < 500)
        throw new InputError("wiki.url-status", `GET ${url} answered ${status}`, spec.where, {
          data: { url, status: response.status },
        });
      throw new InfrastructureError("wiki.url-status", `GET ${url} answered ${status}`, {
        retryable: response.status >= 500,
        data: { url, status: response.status },
      });
    }
    const contentType = response.headers.get("content-type") ?? "";
    const fromContent = typeOfContent(contentType);
    const type = spec.type ?? spec.url.impliedType ?? fromContent;
    if (type === undefined || type === "repository") {
      await response.body?.cancel().catch(() => {});
      throw new InputError(
        "wiki.url-unknown-type",
        type === "repository"
          ? `${url}: a repository URL cannot be downloaded as a document`
          : `cannot tell the resource type of ${url} (Content-Type "${contentType || "none"}"); expected an HTML page, an image or a video, or give "type" in a resource list`,
        spec.where,
      );
    }
    // An HTML error page served with 200 for a missing image or video is not that resource.
    if (spec.type === undefined && fromContent !== undefined && fromContent !== type) {
      await response.body?.cancel().catch(() => {});
      throw new InputError(
        "wiki.url-content-type",
        `${url}: expected ${type === "image" ? "an image" : type === "video" ? "a video" : "an HTML page"}, the server sent Content-Type "${contentType}"`,
        spec.where,
      );
    }
    const cap = caps[type];
    const tooLarge = (bytes: number) =>
      new InputError(
        "wiki.url-too-large",
        `GET ${url}: larger than the ${type} limit of ${cap} bytes (${bytes} bytes${bytes > cap ? "" : " or more"})`,
        spec.where,
        { data: { url, limit: cap } },
      );
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (Number.isFinite(declared) && declared > cap) {
      await response.body?.cancel().catch(() => {});
      throw tooLarge(declared);
    }
    await mkdir(dir, { recursive: true });
    file = join(dir, fileNameFor(url, type, contentType));
    handle = await open(file, "w");
    const hash = createHash("sha256");
    let bytes = 0;
    if (response.body !== null) {
      const reader = response.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          bytes += value.byteLength;
          if (bytes > cap) {
            deadline.abort();
            throw tooLarge(bytes);
          }
          hash.update(value);
          await handle.write(value);
        }
      } catch (cause) {
        if (isSkillsmithError(cause)) throw cause;
        if (deadline.timedOut) throw timeout(cause);
        throw new InfrastructureError(
          "wiki.url-interrupted",
          `GET ${url}: the download broke off after ${bytes} bytes: ${networkReason(cause)}`,
          { retryable: true, data: { url }, cause },
        );
      }
    }
    await handle.close();
    handle = undefined;
    return { file, contentType, sha256: hash.digest("hex"), bytes, type };
  } catch (error) {
    await handle?.close().catch(() => {});
    if (file !== undefined) await rm(file, { force: true });
    throw error;
  } finally {
    deadline.release();
  }
}

const FULL_COMMIT = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;
/** git's messages when the network, not the URL, is at fault. */
const NETWORK_FAILURE =
  /Could not resolve host|Connection refused|Connection timed out|Failed to connect|Network is unreachable|Operation timed out|early EOF|The remote end hung up unexpectedly/i;

function gitFailure(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("Cloning into"));
  return lines.slice(-2).join(" / ") || "no message";
}

/**
 * `git clone --depth 1` of a repository URL at a ref into `dir`, non-interactive (no credential
 * prompts, ssh in batch mode), restricted to the accepted transports. A full commit id is
 * fetched by id; a server speaking git's dumb HTTP protocol cannot serve shallow clones, so
 * there the clone falls back to full depth. Returns the commit checked out.
 */
export async function cloneRepository(
  spec: RemoteResourceSpec,
  dir: string,
  options: FetchOptions = {},
): Promise<{ commit: string }> {
  const url = spec.url.href;
  const ref = spec.url.ref;
  const timeoutMs = options.cloneTimeoutMs ?? DEFAULT_CLONE_TIMEOUT_MS;
  const base = options.env ?? process.env;
  const env = {
    ...base,
    GIT_TERMINAL_PROMPT: "0",
    GIT_ALLOW_PROTOCOL: "http:https:ssh:git:file",
    GIT_SSH_COMMAND: base.GIT_SSH_COMMAND ?? "ssh -o BatchMode=yes",
  };
  const started = Date.now();
  const git = async (args: string[], cwd?: string) => {
    const left = timeoutMs - (Date.now() - started);
    const result = await runProcess("git", args, {
      env,
      timeoutMs: Math.max(1, left),
      ...(cwd === undefined ? {} : { cwd }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (result.spawnError !== undefined)
      throw new InfrastructureError(
        "wiki.git-missing",
        "git is not installed; repository URLs need it",
        { cause: result.spawnError },
      );
    if (result.timedOut)
      throw new InfrastructureError(
        "wiki.url-timeout",
        `git clone ${url}${ref === undefined ? "" : ` at ${ref}`}: timed out after ${secondsText(timeoutMs)}`,
        { retryable: true, data: { url, timeoutMs } },
      );
    return result;
  };
  const fail = (stderr: string): never => {
    const reason = gitFailure(stderr);
    const message = `git clone ${url}${ref === undefined ? "" : ` at ${ref}`} failed: ${reason}`;
    if (NETWORK_FAILURE.test(stderr))
      throw new InfrastructureError("wiki.git-unreachable", message, {
        retryable: true,
        data: { url },
      });
    throw new InputError("wiki.git-clone", message, spec.where, { data: { url } });
  };
  await rm(dir, { recursive: true, force: true });
  if (ref !== undefined && FULL_COMMIT.test(ref)) {
    await mkdir(dir, { recursive: true });
    const init = await git(["init", "--quiet", dir]);
    if (init.exitCode !== 0) fail(init.stderr);
    let fetched = await git(["fetch", "--quiet", "--depth", "1", "--", url, ref], dir);
    if (fetched.exitCode !== 0 && /dumb http transport/i.test(fetched.stderr))
      fetched = await git(["fetch", "--quiet", "--", url, ref], dir);
    if (fetched.exitCode !== 0) fail(fetched.stderr);
    const checkout = await git(["checkout", "--quiet", "FETCH_HEAD"], dir);
    if (checkout.exitCode !== 0) fail(checkout.stderr);
  } else {
    const args = (depth: boolean) => [
      "clone",
      "--quiet",
      ...(depth ? ["--depth", "1"] : []),
      ...(ref === undefined ? [] : ["--branch", ref]),
      "--",
      url,
      dir,
    ];
    let cloned = await git(args(true));
    if (cloned.exitCode !== 0 && /dumb http transport/i.test(cloned.stderr)) {
      await rm(dir, { recursive: true, force: true });
      cloned = await git(args(false));
    }
    if (cloned.exitCode !== 0) fail(cloned.stderr);
  }
  const head = await git(["rev-parse", "HEAD"], dir);
  const commit = head.stdout.trim();
  if (head.exitCode !== 0 || !FULL_COMMIT.test(commit)) fail(head.stderr);
  return { commit };
}

/** What the local connectors need to read a fetched resource. */
export interface FetchedResource {
  readonly absolutePath: string;
  readonly type: ResourceType;
  readonly origin: RemoteOrigin;
}

/** Fetch one URL resource into `dir` (created; the caller removes it). */
export async function fetchRemoteResource(
  spec: RemoteResourceSpec,
  dir: string,
  options: FetchOptions = {},
): Promise<FetchedResource> {
  const now = options.now ?? (() => new Date());
  const type = spec.type ?? spec.url.impliedType;
  if (type === "repository") {
    const checkout = join(dir, "repository");
    const { commit } = await cloneRepository(spec, checkout, options);
    return {
      absolutePath: checkout,
      type,
      origin: {
        url: spec.url.href,
        ...(spec.url.ref === undefined ? {} : { ref: spec.url.ref }),
        commit,
        fetchedAt: now().toISOString(),
      },
    };
  }
  if (spec.url.scheme !== "http" && spec.url.scheme !== "https")
    throw new InputError(
      "wiki.url-scheme",
      `${spec.url.href}: only http and https URLs can name a ${type ?? "document"}; ${spec.url.scheme} URLs name git repositories`,
      spec.where,
    );
  const download = await downloadDocument(spec, dir, options);
  return {
    absolutePath: download.file,
    type: download.type,
    origin: {
      url: spec.url.href,
      fetchedAt: now().toISOString(),
      contentType: download.contentType,
      sha256: download.sha256,
    },
  };
}

/** Downloads kept inside a wiki, by content hash: `<wiki>/.cache/downloads/<sha256>/<file>`. */
export const DOWNLOAD_CACHE = join(".cache", "downloads");

/**
 * Keep a downloaded document in the wiki's download cache (content-addressed, so concurrent or
 * repeated builds agree) and return its path there. Written to a temporary name and renamed, so
 * the cache never holds a partial file. The cache is a store of the wiki like its entries: the
 * kept copy loses known secrets and token shapes (a page quoting a token); the folder still
 * names the hash of the bytes as downloaded, the resource manifest records the kept copy's.
 */
export async function cacheDownload(wiki: string, file: string, sha256: string): Promise<string> {
  const folder = join(wiki, DOWNLOAD_CACHE, sha256);
  const name = redactKnownSecrets(basename(file));
  const target = join(folder, name);
  if (await pathExists(target)) return target;
  await mkdir(folder, { recursive: true });
  const temporary = join(folder, `.${name}.${process.pid}.${Date.now()}.tmp`);
  try {
    await writeFile(temporary, redactFileContent(await readFile(file)));
    await rename(temporary, target);
  } finally {
    await rm(temporary, { force: true });
  }
  return target;
}
