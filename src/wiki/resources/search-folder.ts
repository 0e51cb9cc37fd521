/** The `folder` search backend: a local folder of resources, ranked by BM25 against the query. */
import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { z } from "zod";
import { Bm25Index } from "../../core/bm25.js";
import { InputError } from "../../core/errors.js";
import { isMissing, unlessMissing, unreadableError } from "../../core/fs.js";
import type { ResourceType } from "../meta.js";
import { listResourceInputs, type ResourceInput } from "./collect.js";
import type { TargetedQuery } from "./query.js";
import { repositoryFiles } from "./repository.js";
import {
  type ResourceSearchBackendV1,
  registerSearchBackend,
  type SearchAnswer,
} from "./search-registry.js";

const TEXT_SAMPLE_BYTES = 64 * 1024;

/** The text a local resource is ranked by: its name, plus its text, README, subtitles or caption. */
export async function resourceText(input: ResourceInput): Promise<string> {
  // A companion that is not there adds no text; one that is there but unreadable is an error.
  const read = async (path: string) =>
    ((await unlessMissing(path, readFile(path))) ?? Buffer.alloc(0))
      .subarray(0, TEXT_SAMPLE_BYTES)
      .toString("utf8");
  const name = input.path.replace(/[^A-Za-z0-9]+/g, " ");
  const byType: Record<ResourceType, () => Promise<string>> = {
    article: async () => (await read(input.absolutePath)).replace(/<[^>]+>/g, " "),
    repository: async () => {
      const files = await repositoryFiles(input.absolutePath);
      const readme = files.find((file) => /^readme/i.test(file));
      return `${files.join(" ")} ${readme === undefined ? "" : await read(join(input.absolutePath, readme))}`;
    },
    video: async () => {
      const stem = input.absolutePath.replace(/\.[^.]+$/, "");
      return `${await read(`${stem}.srt`)} ${await read(`${stem}.vtt`)}`;
    },
    image: async () => read(`${input.absolutePath}.txt`),
  };
  return `${name}\n${await byType[input.type]()}`;
}

/** The best `limit` resources for `query` by BM25 over `resourceText`; none scoring 0. */
export async function rankResources(
  query: string,
  inputs: readonly ResourceInput[],
  limit: number,
): Promise<ResourceInput[]> {
  const texts: string[] = [];
  for (const input of inputs) texts.push(await resourceText(input));
  const index = Bm25Index.build(texts, { k1: 1.2, b: 0.75 });
  return index.search(query, limit).map((hit) => inputs[hit.doc] as ResourceInput);
}

const folderConfigSchema = z.strictObject({
  kind: z.literal("folder"),
  /** A folder of resources (as for `wiki build --resources`), relative to the working folder. */
  path: z.string().min(1),
});

class FolderSearchBackend implements ResourceSearchBackendV1 {
  readonly specificationVersion = "v1" as const;
  readonly kind = "folder";
  readonly name: string;

  constructor(private readonly root: string) {
    this.name = `folder:${root}`;
  }

  async search(query: TargetedQuery, limit: number): Promise<SearchAnswer> {
    const { inputs } = await listResourceInputs(this.root);
    const ranked = await rankResources(query.text, inputs, limit);
    return {
      request: `BM25 over ${inputs.length} resources in ${this.root}: ${query.text}`,
      total: ranked.length,
      hits: ranked.map((input) => ({ kind: "local" as const, input })),
    };
  }
}

registerSearchBackend("folder", {
  schema: folderConfigSchema,
  create: (config, environment) => {
    const root = resolve(environment.cwd, config.path);
    let isFolder = false;
    try {
      isFolder = statSync(root).isDirectory();
    } catch (error) {
      // Missing is reported below as "no such folder"; there but unreadable is its own error.
      if (!isMissing(error)) throw unreadableError(root, error);
    }
    if (!isFolder)
      throw new InputError("wiki.search-folder", `no such folder: ${root}`, environment.where);
    return new FolderSearchBackend(root);
  },
});
