/**
 * A tiny generated bench suite for runner tests: one committed repository, skill `alpha`, and
 * requirements r1 and r2 asking for `result-r<k>.txt` holding the word good, each scored by a
 * shell verifier writing JUnit XML.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { git } from "./git.js";

/** Where the tiny repository is mounted in the sandbox. */
export const TINY_MOUNT = "/workspace/tiny";

/** A git repository at `<root>/repo` with one commit holding README.md; its path and commit. */
export async function tinyRepository(root: string): Promise<{ repo: string; commit: string }> {
  const repo = join(root, "repo");
  await mkdir(repo);
  await writeFile(join(repo, "README.md"), "tiny\n");
  await git(repo, "init", "-q", "-b", "main");
  await git(repo, "add", "-A");
  await git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  return { repo, commit: await git(repo, "rev-parse", "HEAD") };
}

/**
 * Writes `<root>/repo` (a git repository holding README.md) and the suite at `<root>/suite`,
 * returning the suite folder. The caller gives the texts a test depends on: `suite.yaml`, the
 * skill's `SKILL.md` and requirement k's `check.sh`.
 */
export async function writeTinySuite(
  root: string,
  texts: { suiteYaml: string; skillMarkdown: string; checkScript: (requirement: number) => string },
): Promise<string> {
  const { repo, commit } = await tinyRepository(root);
  const suite = join(root, "suite");
  const skill = join(suite, "skills", "alpha");
  await mkdir(join(skill, "agent-skills", "alpha"), { recursive: true });
  await writeFile(join(suite, "suite.yaml"), texts.suiteYaml);
  await writeFile(
    join(skill, "skill.yaml"),
    `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: tiny\n  mountPath: ${TINY_MOUNT}\n`,
  );
  await writeFile(join(skill, "agent-skills", "alpha", "SKILL.md"), texts.skillMarkdown);
  for (const k of [1, 2]) {
    const folder = join(skill, "requirements", `r${k}`);
    await mkdir(join(folder, "verifier"), { recursive: true });
    await writeFile(
      join(folder, "requirement.md"),
      `## Requirement\n\nWrite the word good into result-r${k}.txt.\n\n## File Operations\n\n- \`result-r${k}.txt\`\n\n## Acceptance Criteria\n\n- result-r${k}.txt exists\n- it says good\n`,
    );
    await writeFile(join(folder, "verifier", "check.sh"), texts.checkScript(k));
    await writeFile(
      join(folder, "verifier.yaml"),
      "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\n",
    );
  }
  return suite;
}
