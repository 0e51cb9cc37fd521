/**
 * A verifier's inventory kept on disk beside the prepared environments
 * (`<cacheDir>/inventories/<key>.json`), so it is taken once per verifier and environment, not
 * once per process: a resumed run, a second `bench run` of the same suite, `bench check` then
 * `bench run`, and every queue worker on this machine reuse it. Taking one runs pytest's
 * collection in the sandbox (0.7–1.5 s each on a loaded 2-core machine), which was most of the
 * harness's own time per run with real verifiers.
 *
 * The key is a digest of everything that decides what the inventory holds, so nothing stale is
 * ever reused: the verifier's files (content) and how it is run (command, paths, sandbox kind,
 * image), the untouched tree's digest, the prepared environment (its key, digest and preparation
 * time: a rebuilt environment is a new one), and skillsmith's own code that takes and reads
 * inventories (the integrity folder and the pytest plugin, by content). An entry is only read
 * back when its recorded key equals the one asked for and it parses; anything else is taken
 * again and rewritten. Not in the key, as for the check's cache: a host interpreter upgraded
 * outside the prepared environment (delete the cache folder after such an upgrade).
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema } from "../../core/format-tag-schema.js";
import { writeFileAtomic } from "../../core/fs.js";
import { packageRoot } from "../../core/paths.js";
import type { PytestInventory, VerifierInventory } from "../../env/index.js";

/** Bump when what an entry holds changes. */
const INVENTORY_CACHE_FORMAT = formatTag("inventory", 1);

/** Where a verifier's inventories are kept, and the environment they were taken in. */
export interface InventoryCacheScope {
  /** `<cacheDir>/inventories`. */
  readonly folder: string;
  /** A digest of the prepared environment (`environmentIdentity`). */
  readonly environment: string;
}

/** The prepared environment's identity as the cache keys it. */
export function environmentIdentity(base: {
  readonly key: string;
  readonly digest: string;
  readonly preparedAt: string;
  readonly environment?: { readonly image: string };
}): string {
  return createHash("sha256")
    .update(
      JSON.stringify([base.key, base.digest, base.preparedAt, base.environment?.image ?? null]),
    )
    .digest("hex");
}

async function folderDigest(hash: ReturnType<typeof createHash>, folder: string): Promise<void> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)).split(sep).join("/"))
    .sort();
  for (const file of files) {
    hash.update(`\0${file}\0`);
    hash.update(await readFile(join(folder, file)));
  }
}

let producer: Promise<string> | undefined;

/**
 * A digest of skillsmith's code that takes and reads inventories: the integrity folder (as this
 * installation runs it, source or built) and the pytest plugin. A change to either never meets
 * an inventory taken by the other.
 */
export function inventoryProducerDigest(): Promise<string> {
  producer ??= (async () => {
    const hash = createHash("sha256").update(INVENTORY_CACHE_FORMAT);
    const here = dirname(fileURLToPath(import.meta.url));
    await folderDigest(hash, join(here, "..", "..", "env", "verifier", "integrity"));
    await folderDigest(hash, join(packageRoot(), "src", "env", "verifier", "python"));
    return hash.digest("hex");
  })();
  return producer;
}

/**
 * A kept pytest inventory, whole: every field the assessment reads is checked, so a damaged or
 * foreign entry is a miss, never half an inventory. Typed against `PytestInventory`, so a field
 * added there and not here fails the type check.
 */
const pytestInventorySchema: z.ZodType<PytestInventory> = z.object({
  kind: z.literal("pytest"),
  collected: z.array(z.object({ id: z.string(), nodeid: z.string() })),
  defined: z.array(
    z.object({
      base: z.string(),
      nodeid: z.string(),
      min: z.number().int().min(0),
      parametrised: z.boolean(),
      exact: z.boolean().exactOptional(),
    }),
  ),
  modules: z.array(
    z.object({
      nodeid: z.string(),
      location: z.string(),
      file: z.string().exactOptional(),
      collected: z.boolean(),
      functions: z.array(z.string()),
    }),
  ),
  functionPatterns: z.array(z.string()),
  exitStatusPropagates: z.boolean(),
  junitWritten: z.boolean(),
  declaredPlugins: z.array(z.string()),
  tripwireBaseline: z.array(z.string()).exactOptional(),
  versions: z.object({ python: z.string(), pytest: z.string() }),
});

const entrySchema = z.object({
  format: formatTagSchema(INVENTORY_CACHE_FORMAT),
  key: z.string(),
  inventory: pytestInventorySchema,
});

/** The file name of an inventory under `scope` for `verifierKey` (the in-process memo's key). */
export async function inventoryCacheKey(
  scope: InventoryCacheScope,
  verifierKey: string,
): Promise<string> {
  return createHash("sha256")
    .update(
      JSON.stringify([
        INVENTORY_CACHE_FORMAT,
        await inventoryProducerDigest(),
        scope.environment,
        verifierKey,
      ]),
    )
    .digest("hex");
}

/** The inventory kept under `key`, when a whole, matching entry is there. */
export async function keptInventory(
  scope: InventoryCacheScope,
  key: string,
): Promise<PytestInventory | undefined> {
  const stored = await readFile(join(scope.folder, `${key}.json`), "utf8")
    .then((text) => entrySchema.safeParse(JSON.parse(text)))
    .catch(() => undefined);
  return stored?.success === true && stored.data.key === key ? stored.data.inventory : undefined;
}

/**
 * The inventory kept under `key`, else `take()`'s, kept for next time. An entry that is missing,
 * unreadable, damaged or recorded under another key is taken again: the cache only saves time.
 * Only pytest inventories are kept: an opaque one may record a passing failure (a collection
 * that timed out on a loaded machine), which must not weaken every later run's checks. A failure
 * to keep one is not the run's failure (the inventory is returned all the same).
 */
export async function cachedInventory(
  scope: InventoryCacheScope,
  key: string,
  take: () => Promise<VerifierInventory>,
): Promise<VerifierInventory> {
  const kept = await keptInventory(scope, key);
  if (kept !== undefined) return kept;
  const file = join(scope.folder, `${key}.json`);
  const inventory = await take();
  if (inventory.kind !== "pytest") return inventory;
  await writeFileAtomic(
    file,
    `${JSON.stringify({ format: INVENTORY_CACHE_FORMAT, key, inventory })}\n`,
  ).catch(() => undefined);
  return inventory;
}
