/**
 * The wiki on disk: `<wiki>/wiki.json` (frozen thresholds), and per domain
 * `<wiki>/<domain>/{taxonomy.json, resources.json, <skill_id>/}` where each entry folder holds
 * `source/`, `text/overview.md`, `visual/`, `code/` and `meta.json`.
 *
 * Entries appear atomically: an entry is written completely into a staging folder inside the
 * domain folder, then renamed into place, so a crash leaves at most a dot-named staging folder
 * that readers skip. One builder at a time: `<wiki>/.build.lock` is the shared lock of `core/lock.ts`.
 *
 * Every byte the store writes passes `model/redact.ts` first (`jsonText`, `writeEntry`): entries
 * hold what resources and the distiller said, and a resource may quote a token.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { z } from "zod";
import { InfrastructureError, InputError, isSkillsmithError } from "../core/errors.js";
import { pathExists, writeFileAtomic } from "../core/fs.js";
import { acquireLock } from "../core/lock.js";
import { parseInput, parseResult } from "../core/parse.js";
import { redactedJsonFile, redactFileContent, redactKnownSecrets } from "../model/redact.js";
import * as layout from "./layout.js";
import {
  defaultThresholds,
  type ModalityName,
  OLDER_WIKI_FORMAT,
  type ResourceManifest,
  resourceManifestSchema,
  SKILL_ID_ENCODING,
  type SkillMeta,
  skillMetaSchema,
  type Taxonomy,
  type TaxonomyNode,
  type Thresholds,
  taxonomySchema,
  WIKI_MANIFEST_FORMAT,
  WIKI_TAXONOMY_FORMAT,
  type WikiManifest,
  wikiManifestSchema,
} from "./meta.js";
import { readEntries } from "./meta-check.js";

export { LOCK_FILE, listDomains, META_FILE, WIKI_MANIFEST_FILE } from "./layout.js";

const { entryFolderPattern, LOCK_FILE, listDomains, META_FILE, WIKI_MANIFEST_FILE } = layout;

export const TAXONOMY_FILE = "taxonomy.json";
export const RESOURCE_MANIFEST_FILE = "resources.json";
export const CAPABILITIES_FILE = "capabilities.json";
export const OVERVIEW_FILE = "text/overview.md";

export interface WikiEntry {
  /** Absolute path of the entry folder. */
  readonly dir: string;
  readonly meta: SkillMeta;
}

/** Read a JSON file and validate it; a problem names the file and the field. */
export async function readJsonFile<T>(path: string, schema: z.ZodType<T>): Promise<T> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (cause) {
    throw new InputError("wiki.file-unreadable", "cannot read the file", { file: path }, { cause });
  }
  return parseJsonText(path, text, schema);
}

/** `readJsonFile` of text already read (the search index hashes the bytes it validates). */
export function parseJsonText<T>(path: string, text: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new InputError(
      "wiki.file-syntax",
      `not valid JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
      { file: path },
      { cause },
    );
  }
  // Every wiki file carries `format`; a later bare number is explained, not reported as a bad
  // field (a later tag is named by the schema's `formatTagSchema`).
  const format =
    value !== null && typeof value === "object"
      ? (value as { format?: unknown }).format
      : undefined;
  if (typeof format === "number" && format > OLDER_WIKI_FORMAT)
    throw new InputError(
      "wiki.file-format",
      `written in wiki format ${format}; this skillsmith reads format ${OLDER_WIKI_FORMAT}: use the skillsmith that built the wiki, or a newer one`,
      { file: path, field: "format" },
    );
  return parseInput(schema, value, { code: "wiki.file-invalid", location: { file: path } });
}

/** The wiki's JSON file text, with every known secret and token shape removed. */
export function jsonText(value: unknown): string {
  return redactedJsonFile(value);
}

/** Whether `path` exists; a path that is there but unreadable is an `InputError`, never "no". */
const exists = pathExists;

/**
 * The wiki's manifest. The first build writes it with the given thresholds; afterwards it is
 * frozen: thresholds passed to a later build are ignored in favour of the recorded ones, so
 * nothing learnt from an evaluation can shift the acceptance predicate.
 */
export async function loadOrCreateWikiManifest(
  root: string,
  thresholds: Thresholds = defaultThresholds,
  now: () => Date = () => new Date(),
): Promise<{ manifest: WikiManifest; created: boolean }> {
  const path = join(root, WIKI_MANIFEST_FILE);
  if (await exists(path))
    return { manifest: await readJsonFile(path, wikiManifestSchema), created: false };
  const manifest: WikiManifest = {
    format: WIKI_MANIFEST_FORMAT,
    created: now().toISOString(),
    thresholds,
    skill_id_encoding: SKILL_ID_ENCODING,
  };
  await writeFileAtomic(path, jsonText(manifest));
  return { manifest, created: true };
}

/** The manifest of an existing wiki; an `InputError` when `root` is not a wiki. */
export async function readWikiManifest(root: string): Promise<WikiManifest> {
  const path = join(root, WIKI_MANIFEST_FILE);
  if (!(await exists(path)))
    throw new InputError(
      "wiki.missing",
      `not a skill wiki (no ${WIKI_MANIFEST_FILE}); build one with \`skillsmith wiki build\``,
      { file: root },
    );
  return readJsonFile(path, wikiManifestSchema);
}

export interface BuildLock {
  readonly path: string;
  release(): Promise<void>;
}

/**
 * Take the wiki's build lock (the shared host-aware lock of `core/lock.ts`). A lock held by a live
 * process, or by a process on another host, refuses the build at once; a lock left by a process
 * that no longer exists on this host (a crash) is taken over atomically.
 */
export async function acquireBuildLock(root: string): Promise<BuildLock> {
  await mkdir(root, { recursive: true });
  const path = join(root, LOCK_FILE);
  try {
    // No wait: a second builder is refused rather than queued behind the first.
    const outcome = await acquireLock(path, { timeoutMs: 0, pollMs: 10, holderDoes: "building" });
    if (!outcome.acquired)
      throw new InfrastructureError("wiki.locked", `cannot take the wiki lock ${path}`);
    return { path, release: () => outcome.release() };
  } catch (error) {
    if (!isSkillsmithError(error) || error.code !== "core.lock-timeout") throw error;
    const pid = typeof error.data.pid === "number" ? error.data.pid : undefined;
    throw new InfrastructureError(
      "wiki.locked",
      `another build holds the wiki lock ${path}${pid === undefined ? "" : ` (process ${pid})`}; wait for it to finish, or delete the file if no build is running`,
      { data: { lock: path, ...(pid === undefined ? {} : { pid }) }, cause: error },
    );
  }
}

/** Domains of a wiki: its folders that hold a taxonomy or entries (dot folders skipped). */

/**
 * Every entry of one domain (or all domains), sorted by skill id. Staging folders are skipped.
 * (`meta-check.ts`: each meta.json checked without zod, the schema only for what that refuses.)
 */
export const listEntries = readEntries;

/** The shortest id prefix `resolveEntry` accepts (the CLI prints 12 hex digits). */
export const MIN_ID_PREFIX = 4;

/** What an id or id prefix names among `ids`: one id, none, or several (an ambiguous prefix). */
export type IdMatch =
  | { readonly kind: "one"; readonly id: string }
  | { readonly kind: "none" }
  | { readonly kind: "ambiguous"; readonly ids: readonly string[] }
  | { readonly kind: "invalid"; readonly reason: string };

/**
 * Resolve a skill id or a prefix of one (case-insensitive, at least `MIN_ID_PREFIX` hex digits)
 * against the ids a wiki holds: a full id is itself, a prefix must name exactly one id.
 */
export function matchIdPrefix(ids: Iterable<string>, wanted: string): IdMatch {
  const prefix = wanted.trim().toLowerCase();
  if (!/^[0-9a-f]+$/.test(prefix) || prefix.length > 40)
    return { kind: "invalid", reason: "a skill id is 40 hexadecimal digits (or a prefix of one)" };
  if (prefix.length < MIN_ID_PREFIX)
    return {
      kind: "invalid",
      reason: `an id prefix needs at least ${MIN_ID_PREFIX} hexadecimal digits`,
    };
  const found = [...new Set([...ids].filter((id) => id.startsWith(prefix)))].sort();
  if (found.length === 0) return { kind: "none" };
  if (found.length === 1) return { kind: "one", id: found[0] as string };
  return { kind: "ambiguous", ids: found };
}

/** Every entry folder name of the wiki (all domains), without reading any meta.json. */
async function entryIds(root: string): Promise<string[]> {
  const ids: string[] = [];
  for (const domain of await listDomains(root)) {
    const folder = join(root, domain);
    for (const dirent of await readdir(folder, { withFileTypes: true }))
      if (dirent.isDirectory() && entryFolderPattern.test(dirent.name)) ids.push(dirent.name);
  }
  return ids;
}

/**
 * The entry an id or an id prefix (as `wiki search` prints it) names: a clear input error when
 * none does, when the prefix is ambiguous (the matching ids listed) or when it is no id at all.
 */
export async function resolveEntry(root: string, wanted: string): Promise<WikiEntry> {
  const match = matchIdPrefix(await entryIds(root), wanted);
  const location = { field: "skill_id" };
  switch (match.kind) {
    case "invalid":
      throw new InputError("wiki.skill-invalid-id", `"${wanted}": ${match.reason}`, location);
    case "none":
      throw new InputError(
        "wiki.skill-missing",
        `no skill with id "${wanted}" in ${root}`,
        location,
      );
    case "ambiguous":
      throw new InputError(
        "wiki.skill-ambiguous",
        `"${wanted}" is the start of ${match.ids.length} skill ids in ${root}: ${match.ids.slice(0, 10).join(", ")}${match.ids.length > 10 ? ", …" : ""}; give more digits`,
        location,
      );
    case "one": {
      const entry = await findEntry(root, match.id);
      if (entry === undefined)
        throw new InputError(
          "wiki.skill-missing",
          `no skill with id "${wanted}" in ${root}`,
          location,
        );
      return entry;
    }
  }
}

/** One entry by id, searched in every domain; undefined when absent. */
export async function findEntry(root: string, id: string): Promise<WikiEntry | undefined> {
  if (!entryFolderPattern.test(id)) return undefined;
  for (const domain of await listDomains(root)) {
    const dir = join(root, domain, id);
    if (await exists(join(dir, META_FILE)))
      return { dir, meta: await readJsonFile(join(dir, META_FILE), skillMetaSchema) };
  }
  return undefined;
}

export interface EntryContent {
  readonly meta: SkillMeta;
  /** Every file of the entry except meta.json, by path relative to the entry folder. */
  readonly files: Readonly<Record<string, string | Uint8Array>>;
}

/**
 * Write (or replace) an entry atomically: staged completely, meta.json validated, then renamed
 * into place. A replaced entry is moved aside first and deleted after the swap.
 */
export async function writeEntry(root: string, content: EntryContent): Promise<string> {
  const meta = redactedMeta(skillMetaSchema.parse(content.meta));
  const domainDir = join(root, meta.domain);
  await mkdir(domainDir, { recursive: true });
  const staging = join(domainDir, `.staging-${meta.skill_id}-${randomBytes(4).toString("hex")}`);
  const target = join(domainDir, meta.skill_id);
  try {
    for (const folder of ["source", "text", "visual", "code"])
      await mkdir(join(staging, folder), { recursive: true });
    for (const [relative, data] of Object.entries(content.files)) {
      if (
        relative.split("/").some((segment) => segment === ".." || segment === "") ||
        relative.startsWith("/")
      )
        throw new InputError(
          "wiki.entry-path",
          `entry file path "${relative}" must stay inside the entry`,
        );
      // The path too: meta.json lists it redacted (below), and a file name can carry a token.
      const stored = join(staging, redactKnownSecrets(relative));
      await mkdir(dirname(stored), { recursive: true });
      await writeFile(stored, redactFileContent(data));
    }
    await writeFile(join(staging, META_FILE), jsonText(meta));
    let aside: string | undefined;
    if (await exists(target)) {
      aside = join(domainDir, `.replaced-${meta.skill_id}-${randomBytes(4).toString("hex")}`);
      await rename(target, aside);
    }
    await rename(staging, target);
    if (aside !== undefined) await rm(aside, { recursive: true, force: true });
    return target;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * An entry's meta with secrets removed, still valid: a redaction that breaks a field's shape (a
 * category named like a token) refuses the entry, naming the field, rather than leaving a
 * meta.json that no reader of the wiki can parse.
 */
function redactedMeta(meta: SkillMeta): SkillMeta {
  const parsed = parseResult(skillMetaSchema, JSON.parse(jsonText(meta)));
  if (parsed.ok) return parsed.value;
  const field = parsed.error.field;
  throw new InputError(
    "wiki.entry-secret",
    `entry "${meta.skill_name}" (${meta.skill_id}): its ${field ?? ""} looks like a secret and was removed, which leaves it invalid; the entry is not stored`,
    field === undefined ? {} : { field },
  );
}

/** Files of one modality of an entry, with their contents. */
export async function readModality(
  entry: WikiEntry,
  modality: ModalityName,
): Promise<{ path: string; data: Buffer }[]> {
  const files: { path: string; data: Buffer }[] = [];
  for (const relative of entry.meta.files[modality])
    files.push({ path: relative, data: await readFile(join(entry.dir, relative)) });
  return files;
}

/** Build the taxonomy tree of a domain from its entries (deterministic order). */
export function taxonomyOf(domain: string, metas: readonly SkillMeta[]): Taxonomy {
  const roots: TaxonomyNode[] = [];
  const sorted = [...metas].sort((left, right) => (left.skill_id < right.skill_id ? -1 : 1));
  for (const meta of sorted) {
    let level = roots;
    let node: TaxonomyNode | undefined;
    for (const name of meta.category_path) {
      node = level.find((candidate) => candidate.name === name);
      if (node === undefined) {
        node = { name, skills: [], children: [] };
        level.push(node);
      }
      level = node.children;
    }
    node?.skills.push(meta.skill_id);
  }
  const sortTree = (nodes: TaxonomyNode[]) => {
    nodes.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    for (const node of nodes) sortTree(node.children);
  };
  sortTree(roots);
  return { format: WIKI_TAXONOMY_FORMAT, domain, categories: roots };
}

export async function writeTaxonomy(root: string, domain: string): Promise<Taxonomy> {
  const taxonomy = taxonomyOf(
    domain,
    (await listEntries(root, domain)).map((entry) => entry.meta),
  );
  await writeFileAtomic(join(root, domain, TAXONOMY_FILE), jsonText(taxonomy));
  return taxonomy;
}

export async function readTaxonomy(root: string, domain: string): Promise<Taxonomy> {
  const path = join(root, domain, TAXONOMY_FILE);
  if (!(await exists(path))) return { format: WIKI_TAXONOMY_FORMAT, domain, categories: [] };
  return readJsonFile(path, taxonomySchema);
}

export async function writeResourceManifest(
  root: string,
  manifest: ResourceManifest,
): Promise<void> {
  await writeFileAtomic(
    join(root, manifest.domain, RESOURCE_MANIFEST_FILE),
    jsonText(resourceManifestSchema.parse(manifest)),
  );
}

export async function readResourceManifest(
  root: string,
  domain: string,
): Promise<ResourceManifest | undefined> {
  const path = join(root, domain, RESOURCE_MANIFEST_FILE);
  if (!(await exists(path))) return undefined;
  return readJsonFile(path, resourceManifestSchema);
}
