/**
 * Fixtures made once per vitest run and shared by every test file that asks for them, across
 * workers: a test file that only reads the product of an expensive step (the quickstart
 * evaluation is 40 scored runs in sandboxes) should not pay for it again. The folder is made by
 * the global setup below (`vitest.config.ts`) and removed when the run ends, so nothing is reused
 * from an earlier run or another checkout; inside it, the first file to ask for a fixture makes it
 * under a lock while the others wait, and every later file reads what was stored.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import type { TestProject } from "vitest/node";
import { acquireLock } from "../../src/core/lock.js";

declare module "vitest" {
  export interface ProvidedContext {
    sharedFixturesFolder: string;
  }
}

/** Vitest's global setup: one folder for the run's shared fixtures, removed at the end. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const folder = await mkdtemp(join(tmpdir(), "skillsmith-shared-fixtures-"));
  project.provide("sharedFixturesFolder", folder);
  return () => rm(folder, { recursive: true, force: true });
}

export interface SharedFixture<T> {
  /** The fixture's own folder: read it, copy it; never write into it. */
  readonly folder: string;
  /** What `make` returned, as JSON. */
  readonly value: T;
}

/**
 * The fixture named `name`, made by `make(folder)` the first time any test file of this run asks
 * for it. `make`'s result must survive JSON. A `make` that throws leaves nothing stored: the error
 * reaches the file that asked, and the next file to ask tries again.
 */
export async function sharedFixture<T>(
  name: string,
  make: (folder: string) => Promise<T>,
): Promise<SharedFixture<T>> {
  const root = inject("sharedFixturesFolder");
  if (root === undefined) {
    throw new Error("no shared fixtures folder: run the tests through vitest.config.ts");
  }
  const folder = join(root, name);
  const stored = join(root, `${name}.json`);
  const lock = await acquireLock(join(root, `${name}.lock`), {
    done: async () => existsSync(stored),
    pollMs: 250,
    holderDoes: `making the shared test fixture ${name}`,
  });
  if (lock.acquired) {
    try {
      if (!existsSync(stored)) {
        await rm(folder, { recursive: true, force: true });
        await mkdir(folder, { recursive: true });
        const value = await make(folder);
        await writeFile(`${stored}.partial`, JSON.stringify(value));
        await rename(`${stored}.partial`, stored);
      }
    } finally {
      await lock.release();
    }
  }
  return { folder, value: JSON.parse(await readFile(stored, "utf8")) as T };
}
