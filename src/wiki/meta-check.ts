/**
 * Zod-free checks of an entry's `meta.json` and of `wiki.json`, for the search's cold path: a
 * search with no index reads every entry, and loading zod (~95 modules) costs more CPU than
 * reading and indexing a few hundred entries.
 *
 * They are a strict subset of the schemas in `meta.ts`: what they accept, the schema accepts
 * and parses to the same value (defaults filled alike); anything else — a bad field, an unusual
 * but valid value they do not try to judge — is `undefined`, and the caller parses with the
 * schema, which accepts it or names the file and field. So an entry the schema would reject
 * never reaches the index, and every error reads exactly as before. `meta-check.test.ts`
 * compares both on real and mutated entries.
 */
import { readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { InputError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import type { CardSource, SkillCard } from "./cards.js";
import { isWikiFormat, WIKI_ENTRY_FORMAT, WIKI_MANIFEST_FORMAT } from "./formats.js";
import { entryFolderPattern, listDomains, META_FILE, WIKI_MANIFEST_FILE } from "./layout.js";
import type { SkillMeta, Thresholds, WikiManifest } from "./meta.js";
import { shortlistFields, shortlistSizeRules, TEXT_ONLY_EXEC } from "./search-constants.js";
import type { WikiEntry } from "./store.js";

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === "string";
const hasOnly = (value: Json, keys: ReadonlySet<string>) =>
  Object.keys(value).every((key) => keys.has(key));
const isNatural = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isPositiveInteger = (value: unknown) => Number.isSafeInteger(value) && (value as number) > 0;
/** Every element, holes included (`every` skips a sparse array's holes; the schema does not). */
function isList(value: unknown, each: (item: unknown) => boolean): value is unknown[] {
  if (!Array.isArray(value)) return false;
  for (let index = 0; index < value.length; index += 1) if (!each(value[index])) return false;
  return true;
}
const oneOf =
  (values: readonly unknown[]) =>
  (value: unknown): boolean =>
    values.includes(value);

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const SKILL_ID = /^[0-9a-f]{40}$/;
const SHA256 = /^[0-9a-f]{64}$/;
/** An ISO UTC time with seconds, as the store writes it (`toISOString`); the schema also takes others. */
const UTC_TIME = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?Z$/;

const sourceKeys = new Set(["type"]);
const modalityNames: readonly unknown[] = ["text", "visual", "code"];
const execValues: readonly unknown[] = [true, false, "unknown", TEXT_ONLY_EXEC];
const statuses: readonly unknown[] = ["verified", "reference-only", "unverified", "flagged"];
const licenceFlags: readonly unknown[] = ["permissive", "copyleft", "restrictive", "unknown"];
const severities: readonly unknown[] = ["high", "medium", "low"];
const ruleSets: readonly unknown[] = ["skill-audit", "wiki"];
const isModality = (value: unknown) => modalityNames.includes(value);
const isSlug = (value: unknown, max: number) =>
  isString(value) && value.length <= max && SLUG.test(value);

/** A real calendar date (the schema refuses 2026-02-30; a regular expression alone would not). */
function isUtcTime(value: unknown): boolean {
  if (!isString(value)) return false;
  const match = UTC_TIME.exec(value);
  if (match === null) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const resourceTypes: readonly unknown[] = ["repository", "article", "video", "image"];
const provenanceKeys = new Set([
  "source_path",
  "node_index",
  "sha256",
  "resource_type",
  "licence",
  "licence_flag",
  "locator",
]);

function isProvenance(value: unknown): boolean {
  return (
    isRecord(value) &&
    hasOnly(value, provenanceKeys) &&
    isString(value.source_path) &&
    value.source_path.length > 0 &&
    isNatural(value.node_index) &&
    isString(value.sha256) &&
    SHA256.test(value.sha256) &&
    resourceTypes.includes(value.resource_type) &&
    (value.licence === null || isString(value.licence)) &&
    licenceFlags.includes(value.licence_flag) &&
    isString(value.locator)
  );
}

const findingKeys = new Set([
  "code",
  "severity",
  "message",
  "file",
  "line",
  "rule_set",
  "evidence",
]);

function isFinding(value: unknown): boolean {
  return (
    isRecord(value) &&
    hasOnly(value, findingKeys) &&
    isString(value.code) &&
    severities.includes(value.severity) &&
    isString(value.message) &&
    isString(value.file) &&
    ("line" in value ? isPositiveInteger(value.line) : true) &&
    ruleSets.includes(value.rule_set) &&
    ("evidence" in value ? isString(value.evidence) : true)
  );
}

const mergeKeys = new Set([
  "skill_id",
  "skill_name",
  "reason",
  "provenance",
  "code_sha256",
  "tags",
]);

function isMergeRecord(value: unknown): boolean {
  return (
    isRecord(value) &&
    hasOnly(value, mergeKeys) &&
    isString(value.skill_id) &&
    SKILL_ID.test(value.skill_id) &&
    isString(value.skill_name) &&
    isString(value.reason) &&
    isProvenance(value.provenance) &&
    (value.code_sha256 === null || isString(value.code_sha256)) &&
    isList(value.tags, isString)
  );
}

const metaKeys = new Set([
  "format",
  "skill_id",
  "skill_name",
  "domain",
  "category_path",
  "tags",
  "applicability",
  "source",
  "provenance",
  "modalities_present",
  "files",
  "code_language",
  "exec_ok",
  "validation_status",
  "validation_note",
  "merged",
  "merges",
  "findings",
  "created",
  "updated",
]);
const fileKeys = new Set(["text", "visual", "code"]);

/** The parts of a meta.json that are not lists of records. */
function plainFieldsValid(value: Json): boolean {
  const { files, source } = value;
  return (
    isWikiFormat(value.format, WIKI_ENTRY_FORMAT) &&
    isString(value.skill_id) &&
    SKILL_ID.test(value.skill_id) &&
    isString(value.skill_name) &&
    value.skill_name.length >= 1 &&
    value.skill_name.length <= 120 &&
    isSlug(value.domain, 64) &&
    isList(value.category_path, (level) => isSlug(level, 64)) &&
    value.category_path.length >= 1 &&
    value.category_path.length <= 3 &&
    isList(value.tags, (tag) => isString(tag) && tag.length >= 1 && tag.length <= 48) &&
    value.tags.length <= 24 &&
    isString(value.applicability) &&
    value.applicability.length >= 1 &&
    isRecord(source) &&
    hasOnly(source, sourceKeys) &&
    resourceTypes.includes(source.type) &&
    isList(value.modalities_present, isModality) &&
    value.modalities_present.length >= 1 &&
    isRecord(files) &&
    hasOnly(files, fileKeys) &&
    isList(files.text, isString) &&
    isList(files.visual, isString) &&
    isList(files.code, isString) &&
    (value.code_language === null || isString(value.code_language)) &&
    execValues.includes(value.exec_ok) &&
    statuses.includes(value.validation_status) &&
    (value.validation_note === null || isString(value.validation_note)) &&
    isUtcTime(value.created) &&
    isUtcTime(value.updated)
  );
}

/**
 * The entry `value` holds when it is one `skillMetaSchema` certainly accepts, with the schema's
 * defaults filled (`merges`, `findings`); undefined otherwise (then ask the schema).
 */
export function checkSkillMeta(value: unknown): SkillMeta | undefined {
  if (!isRecord(value) || !hasOnly(value, metaKeys) || !plainFieldsValid(value)) return undefined;
  const { provenance, merged, merges = [], findings = [] } = value;
  if (!isList(provenance, isProvenance) || provenance.length === 0) return undefined;
  if (!isList(merged, (id) => isString(id) && SKILL_ID.test(id))) return undefined;
  if (!isList(merges, isMergeRecord) || !isList(findings, isFinding)) return undefined;
  return { ...value, format: WIKI_ENTRY_FORMAT, merges, findings } as SkillMeta;
}

const isStrings = (value: unknown): value is string[] => isList(value, isString);

/**
 * The fields a card is made of, when `value` holds them with the types the card needs; undefined
 * otherwise. Looser than `checkSkillMeta` on purpose: the search index reads a meta.json whose
 * bytes hash to the digest it indexed, an entry the full schema accepted when the index was
 * built, so a check that refused a valid but unusual entry (one `checkSkillMeta` leaves to the
 * schema) would send every search into a rebuild that could never succeed.
 */
export function checkCardSource(value: unknown): CardSource | undefined {
  if (!isRecord(value) || !isRecord(value.files)) return undefined;
  const common = commonCardFields(value);
  const { modalities_present, exec_ok, validation_status } = value;
  const { text, visual, code } = value.files;
  if (common === undefined) return undefined;
  if (!isStrings(text) || !isStrings(visual) || !isStrings(code)) return undefined;
  if (!isList(modalities_present, isModality) || !execValues.includes(exec_ok)) return undefined;
  if (!statuses.includes(validation_status)) return undefined;
  return {
    ...common,
    modalities_present: modalities_present as CardSource["modalities_present"],
    exec_ok: exec_ok as CardSource["exec_ok"],
    files: { text, visual, code },
    validation_status: validation_status as CardSource["validation_status"],
  };
}

/** The fields an entry and its card share, checked alike for both (in the card's key order). */
function commonCardFields(value: Record<string, unknown>) {
  const { skill_id, skill_name, domain, category_path, tags, applicability } = value;
  if (!isString(skill_id) || !isString(skill_name) || !isString(domain)) return undefined;
  if (!isStrings(category_path) || !isStrings(tags) || !isString(applicability)) return undefined;
  return { skill_id, skill_name, domain, category_path, tags, applicability };
}

const cardKeys = new Set([
  "skill_id",
  "skill_name",
  "domain",
  "category_path",
  "tags",
  "applicability",
  "modalities",
  "exec_ok",
  "validation_status",
]);

/** A card as `cardOf` makes it (the search index's stored cards), or undefined. */
export function checkSkillCard(value: unknown): SkillCard | undefined {
  if (!isRecord(value) || !hasOnly(value, cardKeys)) return undefined;
  const common = commonCardFields(value);
  const { modalities, exec_ok, validation_status } = value;
  if (common === undefined) return undefined;
  if (!isStrings(modalities) || !execValues.includes(exec_ok) || !isString(validation_status))
    return undefined;
  return {
    ...common,
    modalities,
    exec_ok: exec_ok as SkillCard["exec_ok"],
    validation_status,
  };
}

/** Every number protocol B fixes, as the first build freezes them (`thresholdsSchema` in meta.ts). */
export const defaultThresholds: Thresholds = {
  min_text_chars: 80,
  max_tags: 12,
  exec_timeout_ms: 10_000,
  exec_memory_bytes: 512 * 1024 * 1024,
  render_viewport_width: 1280,
  render_viewport_height: 800,
  shortlist_k: 20,
  shortlist_size: "k",
  shortlist_fields: [...shortlistFields],
  shortlist_visual_boost: 1,
  select_max: 5,
  card_max_tokens: 500,
  bm25_k1: 1.2,
  bm25_b: 0.75,
  online_budget_max: 100,
  online_resources_per_backend: 3,
  online_query_terms: 6,
  video_scene_threshold: 0.3,
  video_min_scene_frames: 2,
  video_max_frames: 8,
  video_frame_spacing_seconds: 2,
};

/** The thresholds' defaults for fields a manifest may lack (`thresholdsSchema`'s `.default`s). */
const thresholdDefaults = {
  ...Object.fromEntries(
    [
      "render_viewport_width",
      "render_viewport_height",
      "shortlist_size",
      "shortlist_visual_boost",
      "card_max_tokens",
      "online_budget_max",
      "online_resources_per_backend",
      "online_query_terms",
      "video_scene_threshold",
      "video_min_scene_frames",
      "video_max_frames",
      "video_frame_spacing_seconds",
    ].map((key) => [key, defaultThresholds[key as keyof Thresholds]]),
  ),
  shortlist_fields: shortlistFields,
};
const requiredPositiveIntegers = [
  "min_text_chars",
  "max_tags",
  "exec_timeout_ms",
  "exec_memory_bytes",
  "shortlist_k",
  "select_max",
] as const;
const optionalPositiveIntegers = [
  "render_viewport_width",
  "render_viewport_height",
  "card_max_tokens",
  "online_budget_max",
  "online_resources_per_backend",
  "online_query_terms",
  "video_min_scene_frames",
  "video_max_frames",
] as const;
const thresholdKeys = new Set<string>([
  ...requiredPositiveIntegers,
  ...Object.keys(thresholdDefaults),
  "bm25_k1",
  "bm25_b",
]);
const isFiniteNumber = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value);

function checkThresholds(value: unknown): Thresholds | undefined {
  if (!isRecord(value) || !hasOnly(value, thresholdKeys)) return undefined;
  const filled: Json = { ...thresholdDefaults, ...value };
  const fields = filled.shortlist_fields;
  const scene = filled.video_scene_threshold;
  const valid =
    requiredPositiveIntegers.every((key) => isPositiveInteger(filled[key])) &&
    optionalPositiveIntegers.every((key) => isPositiveInteger(filled[key])) &&
    shortlistSizeRules.includes(filled.shortlist_size as "k") &&
    isList(fields, oneOf(shortlistFields)) &&
    fields.length >= 1 &&
    isFiniteNumber(filled.shortlist_visual_boost) &&
    filled.shortlist_visual_boost >= 1 &&
    isFiniteNumber(filled.bm25_k1) &&
    filled.bm25_k1 > 0 &&
    isFiniteNumber(filled.bm25_b) &&
    filled.bm25_b >= 0 &&
    filled.bm25_b <= 1 &&
    isFiniteNumber(scene) &&
    scene >= 0 &&
    scene <= 1 &&
    isFiniteNumber(filled.video_frame_spacing_seconds) &&
    filled.video_frame_spacing_seconds > 0;
  // A fresh copy of the default list: a caller changing it must not change the next manifest's.
  return valid
    ? ({ ...filled, shortlist_fields: [...(fields as string[])] } as Thresholds)
    : undefined;
}

const manifestKeys = new Set(["format", "created", "thresholds", "skill_id_encoding"]);

/** `wiki.json` when `wikiManifestSchema` certainly accepts it, defaults filled; else undefined. */
export function checkWikiManifest(value: unknown): WikiManifest | undefined {
  if (!isRecord(value) || !hasOnly(value, manifestKeys)) return undefined;
  if (!isWikiFormat(value.format, WIKI_MANIFEST_FORMAT)) return undefined;
  if (!isUtcTime(value.created) || !isString(value.skill_id_encoding)) return undefined;
  const thresholds = checkThresholds(value.thresholds);
  return thresholds === undefined
    ? undefined
    : ({ ...value, format: WIKI_MANIFEST_FORMAT, thresholds } as WikiManifest);
}

/** A meta.json's text as the entry it holds: checked here, else by the schema (which names the field). */
export async function parseSkillMetaText(path: string, text: string): Promise<SkillMeta> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const meta = checkSkillMeta(value);
  if (meta !== undefined) return meta;
  const [{ parseJsonText }, { skillMetaSchema }] = await Promise.all([
    import("./store.js"),
    import("./meta.js"),
  ]);
  return parseJsonText(path, text, skillMetaSchema);
}

/** `readWikiManifest` (store.ts) without zod when the manifest passes `checkWikiManifest`. */
export async function readWikiManifestChecked(root: string): Promise<WikiManifest> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(join(root, WIKI_MANIFEST_FILE), "utf8"));
  } catch {
    value = undefined;
  }
  const manifest = checkWikiManifest(value);
  if (manifest !== undefined) return manifest;
  // Missing, unreadable, not JSON or not valid: the store says which, naming the file.
  return (await import("./store.js")).readWikiManifest(root);
}

/**
 * `listEntries` (store.ts) reading each meta.json once, synchronously, checked without zod when
 * it can be: every entry of one domain (or all), sorted by skill id, staging folders skipped.
 */
export async function readEntries(root: string, domain?: string): Promise<WikiEntry[]> {
  const domains = domain === undefined ? await listDomains(root) : [domain];
  const entries: WikiEntry[] = [];
  for (const each of domains) {
    const domainDir = join(root, each);
    const dirents =
      (await unlessMissing(domainDir, readdir(domainDir, { withFileTypes: true }))) ?? [];
    for (const dirent of dirents) {
      if (!dirent.isDirectory() || !entryFolderPattern.test(dirent.name)) continue;
      const dir = join(domainDir, dirent.name);
      const path = join(dir, META_FILE);
      let text: string;
      try {
        text = readFileSync(path, "utf8");
      } catch (cause) {
        throw new InputError(
          "wiki.file-unreadable",
          "cannot read the file",
          { file: path },
          { cause },
        );
      }
      entries.push({ dir, meta: await parseSkillMetaText(path, text) });
    }
  }
  return entries.sort((left, right) =>
    left.meta.skill_id < right.meta.skill_id
      ? -1
      : left.meta.skill_id > right.meta.skill_id
        ? 1
        : 0,
  );
}
