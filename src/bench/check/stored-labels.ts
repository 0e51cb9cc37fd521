/**
 * What the last `bench check` measured of each requirement of a suite, kept beside the
 * measurement cache so `bench validate-suite` (which runs nothing) can say, for a verifier that
 * starts a missing tool, how many of its checks really failed for it here instead of only the
 * static count of tests that start it. A stored row counts only while the verifier folder is
 * the one measured (its tree digest): an edited verifier is static again until checked.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../core/fs.js";

const storedRowSchema = z.object({
  status: z.string(),
  label: z.string(),
  untouchedPassRatio: z.number().nullable(),
  verifierDigest: z.string(),
  measuredAt: z.string(),
});
const storedFileSchema = z.object({
  format: z.literal("skillsmith-check-labels/1"),
  suite: z.string(),
  rows: z.record(z.string(), storedRowSchema),
});

export type StoredCheckLabel = z.infer<typeof storedRowSchema>;

function labelsFile(cacheDir: string, suiteRoot: string): string {
  const name = createHash("sha256").update(suiteRoot).digest("hex").slice(0, 24);
  return join(cacheDir, "checks", "suites", `${name}.json`);
}

/** The stored rows of a suite by `skill/requirement`; empty when nothing (readable) is stored. */
export async function readCheckLabels(
  cacheDir: string,
  suiteRoot: string,
): Promise<Map<string, StoredCheckLabel>> {
  const text = await readFile(labelsFile(cacheDir, suiteRoot), "utf8").catch(() => undefined);
  if (text === undefined) return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // A damaged file only loses what it would have added: validation falls back to static counts.
    return new Map();
  }
  const checked = storedFileSchema.safeParse(parsed);
  if (!checked.success || checked.data.suite !== suiteRoot) return new Map();
  return new Map(Object.entries(checked.data.rows));
}

/** Stores this check's rows over the suite's earlier ones (a check of one skill keeps the rest). */
export async function recordCheckLabels(
  cacheDir: string,
  suiteRoot: string,
  rows: ReadonlyMap<string, StoredCheckLabel>,
): Promise<void> {
  if (rows.size === 0) return;
  const merged = await readCheckLabels(cacheDir, suiteRoot);
  for (const [key, row] of rows) merged.set(key, row);
  const file = labelsFile(cacheDir, suiteRoot);
  await mkdir(join(cacheDir, "checks", "suites"), { recursive: true });
  await writeFileAtomic(
    file,
    `${JSON.stringify({ format: "skillsmith-check-labels/1", suite: suiteRoot, rows: Object.fromEntries(merged) }, null, 2)}\n`,
  );
}
