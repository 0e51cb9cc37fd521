import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PytestInventory, VerifierInventory } from "../../env/index.js";
import {
  cachedInventory,
  environmentIdentity,
  type InventoryCacheScope,
  inventoryCacheKey,
} from "./inventory-cache.js";

function pytestInventory(ids: readonly string[]): PytestInventory {
  return {
    kind: "pytest",
    collected: ids.map((id) => ({ id: `verifier:test_a.py::${id}`, nodeid: `test_a.py::${id}` })),
    defined: [],
    modules: [
      {
        nodeid: "test_a.py",
        location: "verifier:test_a.py",
        file: "test_a.py",
        collected: true,
        functions: [...ids],
      },
    ],
    functionPatterns: ["test"],
    exitStatusPropagates: true,
    junitWritten: false,
    declaredPlugins: [],
    versions: { python: "3.11.7", pytest: "9.0.3" },
  };
}

/** A `take` that counts its calls and answers `inventory`. */
function counting(inventory: VerifierInventory) {
  const calls = { count: 0 };
  return {
    calls,
    take: async () => {
      calls.count += 1;
      return inventory;
    },
  };
}

const base = { key: "base-key", digest: "tree-digest", preparedAt: "2026-12-02T10:00:00.000Z" };

describe("the inventory cache on disk", () => {
  let folder: string;
  let scope: InventoryCacheScope;
  beforeEach(async () => {
    folder = await mkdtemp(join(tmpdir(), "inventory-cache-"));
    scope = { folder: join(folder, "inventories"), environment: environmentIdentity(base) };
  });
  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it("takes an inventory once and reads it back afterwards", async () => {
    const key = await inventoryCacheKey(scope, "verifier-1");
    const first = counting(pytestInventory(["test_one", "test_two"]));
    expect(await cachedInventory(scope, key, first.take)).toEqual(
      pytestInventory(["test_one", "test_two"]),
    );
    const second = counting(pytestInventory(["never"]));
    expect(await cachedInventory(scope, key, second.take)).toEqual(
      pytestInventory(["test_one", "test_two"]),
    );
    expect([first.calls.count, second.calls.count]).toEqual([1, 0]);
  });

  it("never hands a changed verifier the old verifier's inventory (attack: stale test ids)", async () => {
    const old = await inventoryCacheKey(scope, "verifier with two tests");
    await cachedInventory(scope, old, counting(pytestInventory(["test_one", "test_two"])).take);
    const changed = await inventoryCacheKey(scope, "verifier with three tests");
    expect(changed).not.toBe(old);
    const retaken = counting(pytestInventory(["test_one", "test_two", "test_three"]));
    const inventory = await cachedInventory(scope, changed, retaken.take);
    expect(retaken.calls.count).toBe(1);
    expect(inventory.kind === "pytest" ? inventory.collected.length : 0).toBe(3);
  });

  it("never reuses an inventory across environments: another tree, a rebuild, another image", async () => {
    const keys = new Set<string>();
    for (const environment of [
      base,
      { ...base, digest: "another-tree" },
      { ...base, preparedAt: "2026-12-02T11:00:00.000Z" },
      { ...base, key: "another-setup" },
      { ...base, environment: { image: "skillsmith-env:abc" } },
    ]) {
      keys.add(
        await inventoryCacheKey(
          { folder: scope.folder, environment: environmentIdentity(environment) },
          "verifier-1",
        ),
      );
    }
    expect(keys.size).toBe(5);
  });

  it("takes again an entry that is damaged or was recorded under another key", async () => {
    const key = await inventoryCacheKey(scope, "verifier-1");
    await cachedInventory(scope, key, counting(pytestInventory(["test_one"])).take);
    const file = join(scope.folder, `${key}.json`);

    await writeFile(file, "{ not json");
    const afterDamage = counting(pytestInventory(["test_one"]));
    await cachedInventory(scope, key, afterDamage.take);
    expect(afterDamage.calls.count).toBe(1);
    // Rewritten: the next reader finds a good entry again.
    expect(JSON.parse(await readFile(file, "utf8")).key).toBe(key);

    // Another verifier's entry copied under this name is not this verifier's inventory.
    const other = await inventoryCacheKey(scope, "verifier-2");
    await cachedInventory(scope, other, counting(pytestInventory(["test_other"])).take);
    await writeFile(file, await readFile(join(scope.folder, `${other}.json`)));
    const afterSwap = counting(pytestInventory(["test_one"]));
    const inventory = await cachedInventory(scope, key, afterSwap.take);
    expect(afterSwap.calls.count).toBe(1);
    expect(inventory.kind === "pytest" ? inventory.collected[0]?.nodeid : "").toBe(
      "test_a.py::test_one",
    );
  });

  it("takes again an entry missing a field the assessment reads, or with one of another type", async () => {
    const key = await inventoryCacheKey(scope, "verifier-1");
    await cachedInventory(scope, key, counting(pytestInventory(["test_one"])).take);
    const file = join(scope.folder, `${key}.json`);
    const good = JSON.parse(await readFile(file, "utf8"));
    const damaged = [
      // Without `defined`, no parametrised test would be pinned: an inflated set would pass.
      { ...good, inventory: { ...good.inventory, defined: undefined } },
      { ...good, inventory: { ...good.inventory, exitStatusPropagates: "yes" } },
      {
        ...good,
        inventory: {
          ...good.inventory,
          defined: [{ base: "verifier:test_a.py::t", nodeid: "test_a.py::t", min: -1 }],
        },
      },
    ];
    for (const entry of damaged) {
      await writeFile(file, JSON.stringify(entry));
      const again = counting(pytestInventory(["test_one"]));
      const inventory = await cachedInventory(scope, key, again.take);
      expect(again.calls.count).toBe(1);
      expect(inventory).toEqual(pytestInventory(["test_one"]));
    }
  });

  it("keeps no opaque inventory, which may record a passing failure", async () => {
    const key = await inventoryCacheKey(scope, "verifier-1");
    const opaque: VerifierInventory = { kind: "opaque", reason: "timed out", junitChecks: 0 };
    await cachedInventory(scope, key, counting(opaque).take);
    const again = counting(opaque);
    await cachedInventory(scope, key, again.take);
    expect(again.calls.count).toBe(1);
    expect(await readdir(folder)).toEqual([]);
  });
});
