import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { generatedMeta } from "../../test/support/wiki-cards.js";
import { skillMetaSchema, wikiManifestSchema } from "./meta.js";
import { checkSkillMeta, checkWikiManifest } from "./meta-check.js";

const exampleWiki = join(import.meta.dirname, "..", "..", "examples", "wiki");
const exampleMetas: unknown[] = readdirSync(join(exampleWiki, "web-frontend"))
  .filter((name) => /^[0-9a-f]{40}$/.test(name))
  .map((id) =>
    JSON.parse(readFileSync(join(exampleWiki, "web-frontend", id, "meta.json"), "utf8")),
  );
const exampleManifest: unknown = JSON.parse(readFileSync(join(exampleWiki, "wiki.json"), "utf8"));

/** Values a field may be replaced by: types, bounds and shapes a schema tells apart. */
const replacements: unknown[] = [
  null,
  undefined,
  true,
  false,
  0,
  -1,
  1,
  1.5,
  2,
  Number.MAX_SAFE_INTEGER + 2,
  "",
  "x",
  "a-b",
  "A",
  "a".repeat(49),
  "a".repeat(121),
  "0".repeat(40),
  "0".repeat(64),
  "unknown",
  "not-applicable",
  "verified",
  "flagged",
  "high",
  "wiki",
  "video",
  "permissive",
  "2026-02-30T00:00:00.000Z",
  "2026-11-29T00:00:00.000Z",
  "2026-11-29T00:00Z",
  "2026-11-29T00:00:00+01:00",
  "k",
  "max(5n,25)",
  [],
  ["x"],
  ["name"],
  ["a", "b", "c", "d"],
  [""],
  {},
  { type: "video" },
];

const clone = <T>(value: T): T => structuredClone(value);

/** Every value reached by replacing (or deleting) one field, at any depth, of `base`. */
function* mutations(base: unknown): Generator<unknown> {
  if (typeof base !== "object" || base === null) return;
  const keys = Array.isArray(base) ? base.map((_, index) => index) : Object.keys(base);
  for (const key of keys) {
    for (const replacement of replacements) {
      const copy = clone(base) as Record<string | number, unknown>;
      if (replacement === undefined) delete copy[key];
      else copy[key] = replacement;
      yield copy;
    }
    const child = (base as Record<string | number, unknown>)[key];
    for (const mutated of mutations(child)) {
      const copy = clone(base) as Record<string | number, unknown>;
      copy[key] = mutated;
      yield copy;
    }
  }
  if (!Array.isArray(base)) yield { ...clone(base), unexpected: 1 };
}

/**
 * The quick check must be a subset of the schema: whatever it accepts, the schema accepts and
 * parses to the same value. Counts the agreements, so a check that accepts nothing cannot pass.
 */
function compare(
  values: Iterable<unknown>,
  quick: (value: unknown) => unknown,
  schema: { safeParse(value: unknown): { success: boolean; data?: unknown } },
) {
  let accepted = 0;
  let refused = 0;
  let leftToSchema = 0;
  const disagreements: unknown[] = [];
  for (const value of values) {
    // The check reads, never writes, what it is given; the schema gets its own copy.
    const checked = quick(value);
    const parsed = schema.safeParse(clone(value));
    if (checked !== undefined) {
      accepted += 1;
      if (!parsed.success || !isDeepStrictEqual(checked, parsed.data)) disagreements.push(value);
    } else if (parsed.success) leftToSchema += 1;
    else refused += 1;
  }
  expect(disagreements).toEqual([]);
  return { accepted, refused, leftToSchema };
}

describe("checkSkillMeta", () => {
  const generated = [0, 1, 2, 3].map((index) =>
    generatedMeta(index, { domains: ["excel"], vocabularySize: 200, seed: 7 }),
  );
  const withRecords = {
    ...clone(exampleMetas[0] as object),
    merges: [
      {
        skill_id: "1".repeat(40),
        skill_name: "merged one",
        reason: "same unit, same name",
        provenance: clone((exampleMetas[0] as { provenance: unknown[] }).provenance[0]),
        code_sha256: null,
        tags: ["a"],
      },
    ],
    findings: [
      {
        code: "wiki.swallowed-error",
        severity: "high",
        message: "errors swallowed",
        file: "code/main.py",
        line: 3,
        rule_set: "wiki",
        evidence: "except: pass",
      },
    ],
  };

  it("accepts every real entry of the example wiki and generated ones, as the schema parses them", () => {
    const result = compare(
      [...exampleMetas, ...generated, withRecords],
      checkSkillMeta,
      skillMetaSchema,
    );
    expect(result.accepted).toBe(exampleMetas.length + generated.length + 1);
  });

  it("never accepts what the schema refuses, over every one-field change of an entry", () => {
    const result = compare(
      // The example entry with merges and findings added: every field of the schema, mutated.
      mutations(withRecords),
      checkSkillMeta,
      skillMetaSchema,
    );
    // Both outcomes occur: the comparison is not vacuous.
    expect(result.accepted).toBeGreaterThan(50);
    expect(result.refused).toBeGreaterThan(500);
  });

  it("fills the schema's defaults for entries written before merges and findings", () => {
    const meta = checkSkillMeta(clone(exampleMetas[0]));
    expect(meta?.merges).toEqual([]);
    expect(meta?.findings).toEqual([]);
  });

  it("refuses a day the calendar does not have, and a key the schema does not know", () => {
    expect(
      checkSkillMeta({ ...clone(exampleMetas[0] as object), created: "2026-02-29T00:00:00Z" }),
    ).toBeUndefined();
    expect(checkSkillMeta({ ...clone(exampleMetas[0] as object), __proto__: 1 })).toBeDefined();
    expect(
      checkSkillMeta(
        JSON.parse(`{"__proto__": {"x": 1}, ${JSON.stringify(exampleMetas[0]).slice(1)}`),
      ),
    ).toBeUndefined();
  });
});

describe("checkWikiManifest", () => {
  const thresholds = (exampleManifest as { thresholds: Record<string, unknown> }).thresholds;
  const { render_viewport_width, shortlist_fields, video_scene_threshold, ...required } =
    thresholds;
  const older = { ...clone(exampleManifest as object), thresholds: required };

  it("accepts the example wiki's manifest and one written before the defaulted fields, as the schema parses them", () => {
    const result = compare([exampleManifest, older], checkWikiManifest, wikiManifestSchema);
    expect(result.accepted).toBe(2);
    expect(checkWikiManifest(clone(older))?.thresholds.shortlist_fields).toEqual([
      "name",
      "tags",
      "applicability",
      "category_path",
    ]);
  });

  it("never accepts what the schema refuses, over every one-field change", () => {
    const result = compare(
      [...mutations(exampleManifest), ...mutations(older)],
      checkWikiManifest,
      wikiManifestSchema,
    );
    expect(result.accepted).toBeGreaterThan(20);
    expect(result.refused).toBeGreaterThan(200);
  });
});
