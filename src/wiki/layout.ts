/**
 * The wiki's file names and its domain folders, free of schemas: the search over the index file
 * stats these without loading `store.ts` (and with it zod); `store.ts` re-exports them.
 */
import { type Dirent, readdirSync } from "node:fs";
import { readdir } from "node:fs/promises";

export const WIKI_MANIFEST_FILE = "wiki.json";
export const LOCK_FILE = ".build.lock";
export const META_FILE = "meta.json";
/** An entry's folder: its skill id. */
export const entryFolderPattern = /^[0-9a-f]{40}$/;

/** The domain folders of a wiki, sorted (hidden folders such as `.index` are not domains). */
export async function listDomains(root: string): Promise<string[]> {
  return domainNames(await readdir(root, { withFileTypes: true }));
}

/** `listDomains`, synchronously: the query over the index file runs without `fs/promises`. */
export function listDomainsNow(root: string): string[] {
  return domainNames(readdirSync(root, { withFileTypes: true }));
}

function domainNames(dirents: readonly Dirent[]): string[] {
  const names: string[] = [];
  for (const dirent of dirents) {
    if (!dirent.isDirectory() || dirent.name.startsWith(".")) continue;
    names.push(dirent.name);
  }
  return names.sort();
}
