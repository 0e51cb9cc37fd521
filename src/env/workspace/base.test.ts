import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { InputError } from "../../core/errors.js";
import { detectSetup } from "../setup/detect.js";
import { readStoredBase, type StoredBase, storedBaseFile } from "./base.js";

const cleanups = cleanupsAfterEach();
let root: string;
beforeEach(async () => {
  root = await temporaryDirectoryIn(cleanups, "skillsmith-base-");
});

/** A base as an earlier version wrote meta.json: no format tag, prepared without setup. */
const untagged = {
  key: "k1",
  repositoryName: "repo",
  source: "/src/repo",
  requestedCommit: "HEAD",
  commit: "c",
  workspaceMountPath: "/workspace/repo",
  runtime: { mount: { hostPath: "env", sandboxPath: "/skillsmith-env" }, binPaths: [], env: {} },
  digest: "d",
  removedSkillFolders: [".claude/skills"],
  preparedAt: "2026-01-01T00:00:00.000Z",
};

async function failureOf(meta: string): Promise<InputError> {
  await writeFile(join(root, "meta.json"), meta);
  await mkdir(join(root, "tree"), { recursive: true });
  const failure = await readStoredBase(root).catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(InputError);
  return failure as InputError;
}

describe("readStoredBase", () => {
  it("is undefined until both meta.json and tree/ are there, then reads meta.json", async () => {
    expect(await readStoredBase(root)).toBeUndefined();
    await writeFile(join(root, "meta.json"), storedBaseFile({ ...untagged, setup: undefined }));
    expect(await readStoredBase(root)).toBeUndefined();
    await mkdir(join(root, "tree"));
    expect(await readStoredBase(root)).toMatchObject({ key: "k1", commit: "c" });
  });

  it("writes the format tag and reads back what it wrote", async () => {
    const stored: StoredBase = { ...untagged, setup: undefined };
    const text = storedBaseFile(stored);
    expect(JSON.parse(text)).toMatchObject({ format: "skillsmith-base/1" });
    await writeFile(join(root, "meta.json"), text);
    await mkdir(join(root, "tree"));
    expect(await readStoredBase(root)).toEqual(stored);
  });

  it("keeps what each verifier-time install is served by, with the lifecycle scripts npm reruns", async () => {
    const plan = await detectSetup(root);
    const caches = [
      {
        installer: "npm" as const,
        path: "/skillsmith-env/npm-cache",
        installs: [
          {
            installer: "npm" as const,
            command: "npm ci --legacy-peer-deps",
            served: "setup" as const,
            scripts: ["src/memory/package.json: prepare `npm run build`"],
          },
        ],
      },
    ];
    const stored: StoredBase = { ...untagged, setup: { ...plan, caches } };
    await writeFile(join(root, "meta.json"), storedBaseFile(stored));
    await mkdir(join(root, "tree"));
    expect((await readStoredBase(root))?.setup?.caches).toEqual(caches);
  });

  it("reads a meta.json of an earlier version, written without a format tag", async () => {
    await writeFile(join(root, "meta.json"), `${JSON.stringify(untagged, null, 2)}\n`);
    await mkdir(join(root, "tree"));
    const base = await readStoredBase(root);
    expect(base?.runtime?.mount?.hostPath).toBe("env");
    expect(base?.removedSkillFolders).toEqual([".claude/skills"]);
    expect(base && "format" in base).toBe(false);
  });

  it("refuses a damaged meta.json naming the file and the field, instead of using it", async () => {
    const { digest: _digest, ...withoutDigest } = untagged;
    const failure = await failureOf(JSON.stringify(withoutDigest));
    expect(failure.code).toBe("env.base-meta-invalid");
    expect(failure.location).toMatchObject({ file: join(root, "meta.json"), field: "digest" });
  });

  it("refuses a meta.json with a wrong type deep inside (runtime.binPaths)", async () => {
    const failure = await failureOf(
      JSON.stringify({ ...untagged, runtime: { ...untagged.runtime, binPaths: "/bin" } }),
    );
    expect(failure.location).toMatchObject({ field: "runtime.binPaths" });
  });

  it("refuses a meta.json of a later skillsmith or of another kind by its format", async () => {
    const later = await failureOf(JSON.stringify({ ...untagged, format: "skillsmith-base/2" }));
    expect(later.location).toMatchObject({ field: "format" });
    expect(later.message).toMatch(/later skillsmith/);
    const foreign = await failureOf(JSON.stringify({ ...untagged, format: "skillsmith-run/1" }));
    expect(foreign.message).toMatch(/not this kind/);
  });

  it("refuses a meta.json that is not JSON", async () => {
    const failure = await failureOf("{ half");
    expect(failure.code).toBe("env.base-meta-invalid");
    expect(failure.message).toMatch(/not valid JSON/);
  });

  it("refuses a meta.json that is there but unreadable instead of taking it for no base", async () => {
    // As root EACCES cannot be provoked: a folder in meta.json's place gives EISDIR.
    await mkdir(join(root, "meta.json"));
    await mkdir(join(root, "tree"));
    const failure = await readStoredBase(root).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InputError);
    expect((failure as InputError).code).toBe("core.file-unreadable");
    expect((failure as Error).message).toContain(join(root, "meta.json"));
  });
});
