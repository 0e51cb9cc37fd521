import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupsAfterEach, temporaryDirectoryIn } from "../../../test/support/temporary.js";
import { UsageError } from "../../core/errors.js";
import { MANIFEST_FORMAT, mergeManifest, type RunManifest, readManifest } from "./manifest.js";

const base: RunManifest = {
  format: MANIFEST_FORMAT,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  suite: { path: "/s", name: "s", digest: "aaa" },
  configurations: [{ id: "c1", agent: "replay", limits: { timeoutSeconds: 60 } }],
  versions: { skillsmith: "0.1.0", node: "v20", agents: {} },
  limits: { repeats: 1, concurrency: 1, maxAttempts: 3 },
  sandbox: "local",
  seeds: {},
  commandLines: [["skillsmith", "bench", "run", "s"]],
};

describe("mergeManifest", () => {
  it("keeps the first creation time, adds new configurations and appends the command line", () => {
    const merged = mergeManifest(
      base,
      {
        ...base,
        createdAt: "2026-02-01T00:00:00.000Z",
        configurations: [
          ...base.configurations,
          { id: "c2", agent: "none", limits: { timeoutSeconds: 30 } },
        ],
        limits: { ...base.limits, repeats: 3 },
        commandLines: [["skillsmith", "bench", "run", "s", "--repeats", "3"]],
      },
      "/run",
    );
    expect(merged.createdAt).toBe(base.createdAt);
    expect(merged.configurations.map((configuration) => configuration.id)).toEqual(["c1", "c2"]);
    expect(merged.limits.repeats).toBe(3);
    expect(merged.commandLines).toHaveLength(2);
  });

  it("keeps the --base-image mappings of earlier invocations and refuses one that changed", () => {
    const first = { ...base, baseImages: { "ubuntu:24.04": "localhost/a" } };
    // Resumed without the flag: the mapping the stored results were built with stays recorded.
    expect(mergeManifest(first, base, "/run").baseImages).toEqual({
      "ubuntu:24.04": "localhost/a",
    });
    const added = mergeManifest(
      first,
      { ...base, baseImages: { "debian:12": "localhost/b" } },
      "/run",
    );
    expect(added.baseImages).toEqual({ "ubuntu:24.04": "localhost/a", "debian:12": "localhost/b" });
    expect(() =>
      mergeManifest(first, { ...base, baseImages: { "ubuntu:24.04": "localhost/c" } }, "/run"),
    ).toThrow(/built ubuntu:24\.04 tasks from localhost\/a, not localhost\/c/);
  });

  it("refuses a changed suite or a configuration id that now means something else", () => {
    expect(() =>
      mergeManifest(base, { ...base, suite: { ...base.suite, digest: "bbb" } }, "/run"),
    ).toThrow(UsageError);
    expect(() =>
      mergeManifest(
        base,
        {
          ...base,
          configurations: [{ id: "c1", agent: "claude-code", limits: { timeoutSeconds: 60 } }],
        },
        "/run",
      ),
    ).toThrow(/configuration "c1" was/);
  });
});

describe("readManifest", () => {
  const cleanups = cleanupsAfterEach();

  it("is undefined without a manifest and refuses one that is there but unreadable", async () => {
    const runDir = await temporaryDirectoryIn(cleanups, "manifest-");
    expect(await readManifest(runDir)).toBeUndefined();
    // A folder where the file is expected: reading it fails with EISDIR, also as root.
    await mkdir(join(runDir, "manifest.json"));
    await expect(readManifest(runDir)).rejects.toMatchObject({
      code: "core.file-unreadable",
      data: { file: join(runDir, "manifest.json"), errno: "EISDIR" },
    });
  });
});
