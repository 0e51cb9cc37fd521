/**
 * The on-disk shapes of the skill wiki, validated with zod: an entry's `meta.json`, the wiki's
 * manifest (frozen thresholds), a domain's taxonomy and its resource manifest.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { FormatTag } from "../core/format-tag.js";
import { formatTagSchema, readingOlderTags } from "../core/format-tag-schema.js";
import {
  WIKI_ENTRY_FORMAT,
  WIKI_MANIFEST_FORMAT,
  WIKI_OLDER_TAGS,
  WIKI_RESOURCES_FORMAT,
  WIKI_TAXONOMY_FORMAT,
} from "./formats.js";
import { shortlistFields, shortlistSizeRules, TEXT_ONLY_EXEC } from "./search-constants.js";

export * from "./formats.js";
export {
  type ExecOk,
  type ShortlistField,
  type ShortlistSizeRule,
  shortlistFields,
  shortlistSizeRules,
  TEXT_ONLY_EXEC,
} from "./search-constants.js";

/**
 * A wiki file's schema: its `format` the current `tag`, files of wikis built before the tags
 * (`format: 1`) read as it.
 */
export function wikiFileSchema<
  const Shape extends z.core.$ZodLooseShape,
  const Tag extends FormatTag,
>(tag: Tag, shape: Shape) {
  return readingOlderTags(
    z.strictObject({ format: formatTagSchema(tag), ...shape }),
    tag,
    WIKI_OLDER_TAGS,
  );
}

export const resourceTypes = ["repository", "article", "video", "image"] as const;
export type ResourceType = (typeof resourceTypes)[number];

export const licenceFlags = ["permissive", "copyleft", "restrictive", "unknown"] as const;
export type LicenceFlag = (typeof licenceFlags)[number];

export const modalityNames = ["text", "visual", "code"] as const;
export type ModalityName = (typeof modalityNames)[number];

/**
 * `flagged`: the content gate found a high-severity problem (the skill audit's rules or the
 * wiki's snippet rules); the entry is kept for review, hidden like reference-only, never verified.
 */
export const validationStatuses = ["verified", "reference-only", "unverified", "flagged"] as const;
export type ValidationStatus = (typeof validationStatuses)[number];

/** A lowercase name segment: used for domains and category path levels. */
const slug = z
  .string()
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, "expected lowercase letters, digits and single hyphens");

export const domainSchema = slug.max(64);

const skillIdSchema = z.string().regex(/^[0-9a-f]{40}$/, "expected 40 lowercase hex digits");

export const provenanceSchema = z.strictObject({
  /** The resource's path relative to the resources root (or its URL), as in the manifest. */
  source_path: z.string().min(1),
  /** Index of the extracted unit (code region, paragraph, frame or cue, image) the skill comes from. */
  node_index: z.number().int().nonnegative(),
  /** SHA-256 of the resource when the entry was built. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  resource_type: z.enum(resourceTypes),
  licence: z.string().nullable(),
  licence_flag: z.enum(licenceFlags),
  /** A human-readable locator: `file.py:10-24`, `paragraph 3`, `frame at 00:00:04`. */
  locator: z.string(),
});
export type Provenance = z.infer<typeof provenanceSchema>;

/** One finding of the content gate, stored with the entry. */
export const contentFindingSchema = z.strictObject({
  code: z.string(),
  severity: z.enum(["high", "medium", "low"]),
  message: z.string(),
  /** The entry file it was found in: `text/overview.md`, `code/main.py`, `source/excerpt.md`. */
  file: z.string(),
  line: z.number().int().positive().optional(),
  /** `skill-audit`: the rules of `skill audit`; `wiki`: the wiki's snippet rules. */
  rule_set: z.enum(["skill-audit", "wiki"]),
  evidence: z.string().optional(),
});
export type ContentFinding = z.infer<typeof contentFindingSchema>;

/** A candidate folded into an entry by the deduplication gate, with why and where it came from. */
export const mergeRecordSchema = z.strictObject({
  skill_id: skillIdSchema,
  skill_name: z.string(),
  reason: z.string(),
  provenance: provenanceSchema,
  /** SHA-256 of the candidate's normalised code, null without code. */
  code_sha256: z.string().nullable(),
  /** The candidate's tags, kept here: the entry's own tags are only those of its own evidence. */
  tags: z.array(z.string()),
});
export type MergeRecord = z.infer<typeof mergeRecordSchema>;

/** Why a text-only entry is verified without execution (its `validation_note`). */
export const TEXT_ONLY_NOTE =
  "text only: verified by the text gates (completeness, provenance, deduplication, modality, content); no code, nothing executed";

export const skillMetaSchema = wikiFileSchema(WIKI_ENTRY_FORMAT, {
  skill_id: skillIdSchema,
  skill_name: z.string().min(1).max(120),
  domain: domainSchema,
  category_path: z.array(slug.max(64)).min(1).max(3),
  tags: z.array(z.string().min(1).max(48)).max(24),
  applicability: z.string().min(1),
  source: z.strictObject({ type: z.enum(resourceTypes) }),
  provenance: z.array(provenanceSchema).min(1),
  modalities_present: z.array(z.enum(modalityNames)).min(1),
  /** Files per modality, relative to the entry folder. */
  files: z.strictObject({
    text: z.array(z.string()),
    visual: z.array(z.string()),
    code: z.array(z.string()),
  }),
  code_language: z.string().nullable(),
  /**
   * true: the code ran and passed; false: it failed; "unknown": it could not be run here;
   * "not-applicable": a text-only entry, nothing to run (verified by the text gates only).
   */
  exec_ok: z.union([z.boolean(), z.literal("unknown"), z.literal(TEXT_ONLY_EXEC)]),
  validation_status: z.enum(validationStatuses),
  /** Why the entry is not verified (failed executability, sandbox unavailable); null when verified. */
  validation_note: z.string().nullable(),
  /** Ids of later candidates merged into this entry by the deduplication gate. */
  merged: z.array(skillIdSchema),
  /** Every candidate merged into this entry (entries written before this field: none recorded). */
  merges: z.array(mergeRecordSchema).default([]),
  /** The content gate's findings on the entry's files (entries written before it: none). */
  findings: z.array(contentFindingSchema).default([]),
  created: z.string().datetime(),
  updated: z.string().datetime(),
});
export type SkillMeta = z.infer<typeof skillMetaSchema>;

/**
 * Every number protocol B fixes, with the project's own, frozen in `wiki.json` by the first
 * build. Fields added after format 1 was first written carry defaults, so a manifest written
 * before them reads as built with the defaults of that time (which are these).
 */
export const thresholdsSchema = z.strictObject({
  /** Completeness: minimum characters of the text body after whitespace normalisation. */
  min_text_chars: z.number().int().positive(),
  /** Completeness: maximum tags kept after normalisation. */
  max_tags: z.number().int().positive(),
  /** Executability: wall-clock limit of one sandboxed run (and of one page render). */
  exec_timeout_ms: z.number().int().positive(),
  /** Executability: memory limit of one sandboxed run. */
  exec_memory_bytes: z.number().int().positive(),
  /** Executability of HTML/CSS/SVG: the browser viewport a page is laid out and shot in. */
  render_viewport_width: z.number().int().positive().default(1280),
  render_viewport_height: z.number().int().positive().default(800),
  /** Search stage 1 shortlist size K (the paper's 20). */
  shortlist_k: z.number().int().positive(),
  /** How the shortlist size is chosen: K, or the public code's pool max(5n, 25). */
  shortlist_size: z.enum(shortlistSizeRules).default("k"),
  /** The card fields stage 1 indexes. */
  shortlist_fields: z
    .array(z.enum(shortlistFields))
    .min(1)
    .default([...shortlistFields]),
  /** Score factor of entries with a visual modality (1 = none; the public code uses 1.25). */
  shortlist_visual_boost: z.number().min(1).default(1),
  /** Search stage 2: at most this many selected (n). */
  select_max: z.number().int().positive(),
  /** Stage 2 cards: the most tokens one card may take (4 characters a token). */
  card_max_tokens: z.number().int().positive().default(500),
  /** BM25 parameters. */
  bm25_k1: z.number().positive(),
  bm25_b: z.number().min(0).max(1),
  /** Online acquisition: the most skills one online pool may hold. */
  online_budget_max: z.number().int().positive().default(100),
  /** Online acquisition: resources taken from each search backend per query. */
  online_resources_per_backend: z.number().int().positive().default(3),
  /** Online acquisition: the most task terms in one targeted query. */
  online_query_terms: z.number().int().positive().default(6),
  /** Videos: scene score above which a frame starts a new scene (ffmpeg's `scene`, 0–1). */
  video_scene_threshold: z.number().min(0).max(1).default(0.3),
  /** Videos: scene sampling needs at least this many key frames, else equal windows. */
  video_min_scene_frames: z.number().int().positive().default(2),
  /** Videos: the most key frames one video contributes. */
  video_max_frames: z.number().int().positive().default(8),
  /** Videos, equal windows: about one frame per this many seconds. */
  video_frame_spacing_seconds: z.number().positive().default(2),
});
export type Thresholds = z.infer<typeof thresholdsSchema>;

/** The defaults (zod-free, in `meta-check.ts`, so the search's cold path reads them without zod). */
export { defaultThresholds } from "./meta-check.js";

/** `<wiki>/wiki.json`: written by the first build, then frozen (later builds reuse it). */
export const wikiManifestSchema = wikiFileSchema(WIKI_MANIFEST_FORMAT, {
  created: z.string().datetime(),
  thresholds: thresholdsSchema,
  skill_id_encoding: z.string(),
});
export type WikiManifest = z.infer<typeof wikiManifestSchema>;

export const resourceRecordSchema = z.strictObject({
  /** Relative to the resources root (forward slashes), or a URL. */
  path: z.string().min(1),
  type: z.enum(resourceTypes),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().nonnegative(),
  licence: z.string().nullable(),
  licence_flag: z.enum(licenceFlags),
  /** Extra files that belong to the resource (a video's subtitles). */
  companions: z.array(z.string()),
  /** Fetched resources: the URL fetched (without a `#ref`), and when the fetch finished. */
  url: z.string().min(1).optional(),
  fetched_at: z.string().datetime().optional(),
  /** Repository URLs: the ref asked for and the commit cloned. */
  ref: z.string().min(1).optional(),
  commit: z
    .string()
    .regex(/^[0-9a-f]{40}$|^[0-9a-f]{64}$/)
    .optional(),
  /** Downloaded documents: the Content-Type the server sent. */
  content_type: z.string().optional(),
  /** Repositories read in part (a code search hit): the only files hashed and read. */
  focus: z.array(z.string().min(1)).min(1).optional(),
  /** Repositories: source files their grammar could not parse (no regions from them). */
  unparsed: z.array(z.string().min(1)).optional(),
  /** Videos: how the key frames were chosen, with the numbers used, and their times. */
  key_frames: z
    .strictObject({
      method: z.enum(["scene", "equal-windows"]),
      /** Equal windows: why scene sampling was not used. */
      fallback_reason: z.string().optional(),
      scene_threshold: z.number().min(0).max(1),
      min_scene_frames: z.number().int().positive(),
      max_frames: z.number().int().positive(),
      frame_spacing_seconds: z.number().positive(),
      duration_seconds: z.number().nonnegative(),
      times_seconds: z.array(z.number().nonnegative()),
    })
    .optional(),
  /** Videos: where the transcript came from (a file beside the video, a track inside it, none). */
  transcript: z
    .strictObject({
      source: z.enum(["sidecar", "embedded", "none"]),
      /** Sidecar: the file (as in `companions`); embedded: the ffmpeg stream, e.g. `0:s:0`. */
      from: z.string().optional(),
      codec: z.string().optional(),
      language: z.string().optional(),
      cues: z.number().int().nonnegative(),
    })
    .optional(),
  /**
   * Findings about the resource as a whole: the skill audit's rules on what the distiller read
   * about it besides the unit (`content-gate.ts`, `resourceFindings`), recorded once here in the
   * domain's resources.json (never in an entry's provenance.json). A high one flags every entry
   * distilled from the resource, whose content gate detail names this record.
   */
  findings: z.array(contentFindingSchema).optional(),
});
export type ResourceRecord = z.infer<typeof resourceRecordSchema>;

/** `<wiki>/<domain>/resources.json`: every resource a build of the domain used. */
export const resourceManifestSchema = wikiFileSchema(WIKI_RESOURCES_FORMAT, {
  domain: domainSchema,
  resources: z.array(resourceRecordSchema),
});
export type ResourceManifest = z.infer<typeof resourceManifestSchema>;

export interface TaxonomyNode {
  name: string;
  skills: string[];
  children: TaxonomyNode[];
}
export const taxonomyNodeSchema: z.ZodType<TaxonomyNode> = z.lazy(() =>
  z.strictObject({
    name: z.string(),
    skills: z.array(z.string()),
    children: z.array(taxonomyNodeSchema),
  }),
);
export const taxonomySchema = wikiFileSchema(WIKI_TAXONOMY_FORMAT, {
  domain: domainSchema,
  categories: z.array(taxonomyNodeSchema),
});
export type Taxonomy = z.infer<typeof taxonomySchema>;

/**
 * The byte encoding hashed into a skill id, documented here and recorded in every wiki
 * manifest: the UTF-8 bytes of `domain`, a NUL byte, `source_path` (the manifest path,
 * forward slashes), a NUL byte, and `node_index` in decimal ASCII without leading zeros.
 * NUL cannot occur in any of the three, so distinct triples never encode alike.
 */
export const SKILL_ID_ENCODING =
  "sha1(utf8(domain) || 0x00 || utf8(source_path) || 0x00 || ascii(decimal(node_index)))";

export function skillId(domain: string, sourcePath: string, nodeIndex: number): string {
  if (!Number.isInteger(nodeIndex) || nodeIndex < 0)
    throw new RangeError(`node_index must be a non-negative integer, got ${nodeIndex}`);
  return createHash("sha1")
    .update(
      Buffer.concat([
        Buffer.from(domain, "utf8"),
        Buffer.from([0]),
        Buffer.from(sourcePath, "utf8"),
        Buffer.from([0]),
        Buffer.from(String(nodeIndex), "ascii"),
      ]),
    )
    .digest("hex");
}
