import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InputError } from "../core/errors.js";
import { resolveEmbeddingModel } from "./embedding-config.js";

async function folderWithConfig(content: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "skillsmith-embedding-config-"));
  await writeFile(join(folder, "skillsmith.config.json"), content);
  return folder;
}

describe("resolveEmbeddingModel", () => {
  it("takes the flag over the environment over the section of the config file", async () => {
    const cwd = await folderWithConfig(
      JSON.stringify({ wiki: { embeddingModel: "openai:from-wiki" }, synth: {} }),
    );
    const env = { SKILLSMITH_EMBEDDING_MODEL: "openai:from-env" };
    expect(resolveEmbeddingModel("openai:from-flag", "wiki", { cwd, env })).toEqual({
      spec: "openai:from-flag",
      from: "flag",
    });
    expect(resolveEmbeddingModel(undefined, "wiki", { cwd, env })).toEqual({
      spec: "openai:from-env",
      from: "environment",
    });
    expect(resolveEmbeddingModel(undefined, "wiki", { cwd, env: {} })).toEqual({
      spec: "openai:from-wiki",
      from: "config",
    });
    // Each caller reads only its own section.
    expect(resolveEmbeddingModel(undefined, "synth", { cwd, env: {} })).toBeUndefined();
  });

  it("names the file and the field of a bad section", async () => {
    const cwd = await folderWithConfig(JSON.stringify({ synth: { embeddingModel: 7 } }));
    let caught: unknown;
    try {
      resolveEmbeddingModel(undefined, "synth", { cwd, env: {} });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InputError);
    const message = (caught as Error).message;
    expect(message).toContain("skillsmith.config.json");
    expect(message).toContain("synth.embeddingModel");
  });

  it("is undefined without flag, variable or file", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "skillsmith-embedding-config-"));
    expect(resolveEmbeddingModel(" ", "wiki", { cwd, env: {} })).toBeUndefined();
  });
});
