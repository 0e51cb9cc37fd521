/**
 * Real-sized repositories for the benchmarks that measure what users hit. The starter-workflows
 * bundle in `../shared/fixtures/repos/` is a real repository (about 500 files); `generateRepository`
 * writes a larger one deterministically (a seeded mix of source, test, documentation and data files
 * in nested packages, committed in several commits so `.git` holds a real pack), the size of a
 * mid-sized project such as fastapi (~3,000 files).
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { git } from "../test/support/git.js";

/** `../shared` beside the project, as on the build machines; undefined when it is absent. */
export function sharedFixtures(): string | undefined {
  const shared = resolve(import.meta.dirname, "..", "..", "shared");
  return existsSync(join(shared, "fixtures")) ? join(shared, "fixtures") : undefined;
}

/** The starter-workflows bundle, or an error naming where it was looked for. */
export function starterWorkflowsBundle(): string {
  const fixtures = sharedFixtures();
  const bundle =
    fixtures === undefined
      ? undefined
      : join(fixtures, "repos", "actions-starter-workflows.bundle");
  if (bundle === undefined || !existsSync(bundle)) {
    throw new Error(
      `the starter-workflows bundle is missing: expected ../shared/fixtures/repos/actions-starter-workflows.bundle beside the project (${resolve(import.meta.dirname, "..", "..", "shared")})`,
    );
  }
  return bundle;
}

/** A small seeded generator (mulberry32), so every run writes the same repository. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const words = [
  "request",
  "response",
  "router",
  "depends",
  "schema",
  "model",
  "field",
  "validate",
  "header",
  "cookie",
  "token",
  "session",
  "query",
  "path",
  "body",
  "status",
  "error",
  "handler",
  "config",
  "client",
];

function sourceText(next: () => number, lines: number): string {
  const out: string[] = [];
  for (let line = 0; line < lines; line += 1) {
    const a = words[Math.floor(next() * words.length)] ?? "value";
    const b = words[Math.floor(next() * words.length)] ?? "value";
    out.push(
      line % 12 === 0
        ? `def ${a}_${b}_${line}(${a}: str, ${b}: int = ${line}) -> dict:`
        : `    ${a}_${line} = ${b}(${Math.floor(next() * 1000)})  # ${a} ${b}`,
    );
  }
  return `${out.join("\n")}\n`;
}

/**
 * Write a git repository of `files` tracked files under `root` (created) and return its commit.
 * Sizes follow a long tail like real projects: most files 1–8 KiB, a few up to ~100 KiB.
 */
export async function generateRepository(
  root: string,
  options: { readonly files: number; readonly seed?: number; readonly commits?: number },
): Promise<{ readonly path: string; readonly commit: string }> {
  const next = random(options.seed ?? 15);
  const commits = Math.max(1, options.commits ?? 4);
  const paths: string[] = [];
  for (let index = 0; index < options.files; index += 1) {
    const kind = next();
    const package_ = `pkg${Math.floor(index / 120)}`;
    const module = `mod${Math.floor((index % 120) / 15)}`;
    if (kind < 0.6) paths.push(`src/${package_}/${module}/file_${index}.py`);
    else if (kind < 0.85) paths.push(`tests/${package_}/test_${index}.py`);
    else if (kind < 0.95) paths.push(`docs/${package_}/page_${index}.md`);
    else paths.push(`data/${package_}/fixture_${index}.json`);
  }
  await mkdir(root, { recursive: true });
  await git(root, "init", "-q", "-b", "main");
  const perCommit = Math.ceil(paths.length / commits);
  for (let commit = 0; commit < commits; commit += 1) {
    for (const path of paths.slice(commit * perCommit, (commit + 1) * perCommit)) {
      const tail = next();
      const lines = tail < 0.9 ? 20 + Math.floor(next() * 180) : 400 + Math.floor(next() * 2000);
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), sourceText(next, lines));
    }
    await git(root, "add", "-A");
    await git(root, "-c", "commit.gpgsign=false", "commit", "-q", "-m", `part ${commit + 1}`);
  }
  await git(root, "gc", "-q");
  return { path: root, commit: await git(root, "rev-parse", "HEAD") };
}

/**
 * The repository `SKILLSMITH_BENCH_REPOSITORY` names (a git folder or `.bundle`, at its HEAD),
 * labelled with its file count; undefined when the variable is not set.
 */
export async function repositoryFromEnvironment(): Promise<
  { readonly label: string; readonly path: string; readonly commit: string } | undefined
> {
  const given = process.env.SKILLSMITH_BENCH_REPOSITORY;
  if (given === undefined || given === "") return undefined;
  const path = resolve(given);
  if (!existsSync(path)) throw new Error(`SKILLSMITH_BENCH_REPOSITORY=${given} does not exist`);
  const commit = await git(path, "rev-parse", "HEAD");
  const files = (await git(path, "ls-tree", "-r", "--name-only", commit)).split("\n").length;
  return { label: `${path} (${files} files)`, path, commit };
}
