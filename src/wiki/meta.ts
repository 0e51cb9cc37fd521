/**
 * The on-disk shapes of the skill wiki, validated with zod: an entry's `meta.json`, the wiki's
 * manifest (frozen thresholds), a domain's taxonomy and its resource manifest.
 */
import { createHash } from "node:crypto";
import { z } from "zod";

export const WIKI_FORMAT_VERSION = 1;

export const resourceTypes = ["repository", "article", "video", "image"] as const;
export type ResourceType = (typeof resourceTypes)[number];

export const licenceFlags = ["permissive", "copyleft", "restrictive", "unknown"] as const;
export type LicenceFlag = (typeof licenceFlags)[number];

export const modalityNames = ["text", "visual", "code"] as const;
export type ModalityName = (typeof modalityNames)[number];

export const validationStatuses = ["verified", "reference-only", "unverified"] as const;
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

export const skillMetaSchema = z.strictObject({
  format: z.literal(WIKI_FORMAT_VERSION),
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
  exec_ok: z.union([z.boolean(), z.literal("unknown")]),
  validation_status: z.enum(validationStatuses),
  /** Why the entry is not verified (failed executability, sandbox unavailable); null when verified. */
  validation_note: z.string().nullable(),
  /** Ids of later candidates merged into this entry by the deduplication gate. */
  merged: z.array(skillIdSchema),
  created: z.string().datetime(),
  updated: z.string().datetime(),
});
export type SkillMeta = z.infer<typeof skillMetaSchema>;

export const thresholdsSchema = z.strictObject({
  /** Completeness: minimum characters of the text body after whitespace normalisation. */
  min_text_chars: z.number().int().positive(),
  /** Completeness: maximum tags kept after normalisation. */
  max_tags: z.number().int().positive(),
  /** Executability: wall-clock limit of one sandboxed run. */
  exec_timeout_ms: z.number().int().positive(),
  /** Executability: memory limit of one sandboxed run. */
  exec_memory_bytes: z.number().int().positive(),
  /** Search stage 1 shortlist size. */
  shortlist_k: z.number().int().positive(),
  /** Search stage 2: at most this many selected. */
  select_max: z.number().int().positive(),
  /** BM25 parameters. */
  bm25_k1: z.number().positive(),
  bm25_b: z.number().min(0).max(1),
});
export type Thresholds = z.infer<typeof thresholdsSchema>;

export const defaultThresholds: Thresholds = {
  min_text_chars: 80,
  max_tags: 12,
  exec_timeout_ms: 10_000,
  exec_memory_bytes: 512 * 1024 * 1024,
  shortlist_k: 20,
  select_max: 5,
  bm25_k1: 1.2,
  bm25_b: 0.75,
};

/** `<wiki>/wiki.json`: written by the first build, then frozen (later builds reuse it). */
export const wikiManifestSchema = z.strictObject({
  format: z.literal(WIKI_FORMAT_VERSION),
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
});
export type ResourceRecord = z.infer<typeof resourceRecordSchema>;

/** `<wiki>/<domain>/resources.json`: every resource a build of the domain used. */
export const resourceManifestSchema = z.strictObject({
  format: z.literal(WIKI_FORMAT_VERSION),
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
export const taxonomySchema = z.strictObject({
  format: z.literal(WIKI_FORMAT_VERSION),
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
