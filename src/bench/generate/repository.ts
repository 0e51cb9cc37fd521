/** What the two model roles are told about the repository: bounded, deterministic metadata. */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { unlessMissing } from "../../core/fs.js";
import { detectSetup, type PreparedBase, type SetupLanguage } from "../../env/index.js";

export interface RepositoryMetadata {
  readonly name: string;
  readonly commit: string;
  readonly language: SetupLanguage;
  readonly mountPath: string;
  readonly testCommand: string;
  /** One path per line, folders end with `/`; at most `MAX_LISTING_ENTRIES`. */
  readonly structure: string;
  readonly readme: string;
}

export const MAX_LISTING_ENTRIES = 120;
const MAX_LISTING_DEPTH = 2;
const README_HEAD_CHARACTERS = 3_000;
const ignoredFolders = new Set([".git", "node_modules", "__pycache__", ".venv", "venv", "dist"]);

const testCommands: Readonly<Record<SetupLanguage, string>> = {
  python: "python -m pytest",
  node: "npm test",
  go: "go test ./...",
  rust: "cargo test",
  java: "mvn test",
  ruby: "bundle exec rake test",
  unknown: "(none detected)",
};

async function listing(root: string): Promise<string> {
  const lines: string[] = [];
  let truncated = false;
  const walk = async (folder: string, prefix: string, depth: number): Promise<void> => {
    // The tree is the prepared checkout: a folder in it that cannot be listed is a failure to
    // report, not a part of the repository to leave out of the prompt silently.
    const entries = (await unlessMissing(folder, readdir(folder, { withFileTypes: true }))) ?? [];
    entries.sort((left, right) => left.name.localeCompare(right.name));
    for (const entry of entries) {
      if (lines.length >= MAX_LISTING_ENTRIES) {
        truncated = true;
        return;
      }
      if (entry.isDirectory()) {
        if (ignoredFolders.has(entry.name)) continue;
        lines.push(`${prefix}${entry.name}/`);
        if (depth < MAX_LISTING_DEPTH) {
          await walk(join(folder, entry.name), `${prefix}${entry.name}/`, depth + 1);
        }
      } else {
        lines.push(`${prefix}${entry.name}`);
      }
    }
  };
  await walk(root, "", 1);
  if (truncated) lines.push(`… (listing cut at ${MAX_LISTING_ENTRIES} entries)`);
  return lines.join("\n");
}

async function readmeHead(root: string): Promise<string> {
  const names = (await unlessMissing(root, readdir(root))) ?? [];
  const readme = names.find((name) => /^readme(\.\w+)?$/i.test(name));
  if (readme === undefined) return "(no README)";
  // Safe to swallow: the README head is optional context for the prompt, and a `README` that is
  // a folder or a dangling link belongs to the repository as it is (its text is then empty).
  const text = await readFile(join(root, readme), "utf8").catch(() => "");
  return text.length > README_HEAD_CHARACTERS
    ? `${text.slice(0, README_HEAD_CHARACTERS)}\n…`
    : text;
}

export async function describeRepository(base: PreparedBase): Promise<RepositoryMetadata> {
  const plan = await detectSetup(base.tree);
  return {
    name: base.repositoryName,
    commit: base.commit,
    language: plan.language,
    mountPath: base.workspaceMountPath,
    testCommand: testCommands[plan.language],
    structure: await listing(base.tree),
    readme: await readmeHead(base.tree),
  };
}
