/**
 * Tiny generated bench suites for runner tests: one committed repository, skill `alpha`, and
 * requirements asking for a file holding the word good, each scored by a shell verifier writing
 * JUnit XML. `writeTinySuite` leaves the texts to the caller; `writeReplaySuite` writes a whole
 * suite for the replay agent with its predictions.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { runProcess } from "../../src/core/process.js";
import { git } from "./git.js";

/** Where the tiny repository is mounted in the sandbox. */
export const TINY_MOUNT = "/workspace/tiny";

/**
 * A git repository at `<root>/repo` with one commit holding README.md (and `files`, path →
 * content); its path and commit.
 */
export async function tinyRepository(
  root: string,
  files: Readonly<Record<string, string>> = {},
): Promise<{ repo: string; commit: string }> {
  const repo = join(root, "repo");
  await mkdir(repo);
  await writeFile(join(repo, "README.md"), "tiny\n");
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  await git(repo, "init", "-q", "-b", "main");
  await git(repo, "add", "-A");
  await git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  return { repo, commit: await git(repo, "rev-parse", "HEAD") };
}

/** Writes `<suite>/suite.yaml` and the skill `alpha`'s texts; returns the skill's folder. */
export async function writeAlphaSkill(
  suite: string,
  texts: { suiteYaml: string; skillYaml: string; skillMarkdown: string },
): Promise<string> {
  const skill = join(suite, "skills", "alpha");
  await mkdir(join(skill, "agent-skills", "alpha"), { recursive: true });
  await writeFile(join(suite, "suite.yaml"), texts.suiteYaml);
  await writeFile(join(skill, "skill.yaml"), texts.skillYaml);
  await writeFile(join(skill, "agent-skills", "alpha", "SKILL.md"), texts.skillMarkdown);
  return skill;
}

/** Writes requirement `id` of the skill at `skill`: its text and a verifier of one `check.sh`. */
export async function writeRequirement(
  skill: string,
  id: string,
  texts: { requirementMarkdown: string; checkScript: string; verifierYaml: string },
): Promise<void> {
  const folder = join(skill, "requirements", id);
  await mkdir(join(folder, "verifier"), { recursive: true });
  await writeFile(join(folder, "requirement.md"), texts.requirementMarkdown);
  await writeFile(join(folder, "verifier", "check.sh"), texts.checkScript);
  await writeFile(join(folder, "verifier.yaml"), texts.verifierYaml);
}

/**
 * Writes `<root>/repo` (a git repository holding README.md) and the suite at `<root>/suite`,
 * returning the suite folder. The caller gives the texts a test depends on: `suite.yaml`, the
 * skill's `SKILL.md` and requirement k's `check.sh`, and any files the repository ships.
 */
export async function writeTinySuite(
  root: string,
  texts: {
    suiteYaml: string;
    skillMarkdown: string;
    checkScript: (requirement: number) => string;
    repositoryFiles?: Readonly<Record<string, string>>;
  },
): Promise<string> {
  const { repo, commit } = await tinyRepository(root, texts.repositoryFiles);
  const suite = join(root, "suite");
  const skill = await writeAlphaSkill(suite, {
    suiteYaml: texts.suiteYaml,
    skillYaml: `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: tiny\n  mountPath: ${TINY_MOUNT}\n`,
    skillMarkdown: texts.skillMarkdown,
  });
  for (const k of [1, 2]) {
    await writeRequirement(skill, `r${k}`, {
      requirementMarkdown: `## Requirement\n\nWrite the word good into result-r${k}.txt.\n\n## File Operations\n\n- \`result-r${k}.txt\`\n\n## Acceptance Criteria\n\n- result-r${k}.txt exists\n- it says good\n`,
      checkScript: texts.checkScript(k),
      verifierYaml: "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\n",
    });
  }
  return suite;
}

/** Patch text creating `path` with one line, `text`. */
export function newFilePatch(path: string, text: string): string {
  return `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+${text}\n`;
}

/**
 * Patch text creating each file of `files` (path → content) in a repository that has none of
 * them; each content is written with a final newline.
 */
export function newFilesPatch(files: Readonly<Record<string, string>>): string {
  return Object.entries(files)
    .map(([path, content]) => {
      const lines = content.endsWith("\n") ? content.slice(0, -1).split("\n") : content.split("\n");
      const body = lines.map((line) => `+${line}\n`).join("");
      return `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines.length} @@\n${body}`;
    })
    .join("");
}

/**
 * Writes `<root>/repo` and a suite at `<root>/suite` with one configuration, `replay` (agent
 * replay, 30 s timeout), and requirements r1…r<requirements> asking for `out/r<k>.txt` holding
 * the word good. Requirement k's verifier sleeps `verifierSleepSeconds` (so kills can land while
 * runs are in flight), then checks two things: the file exists, and it says good.
 *
 * The predictions at `<root>/predictions.jsonl`: the `with` arm writes "good" for every k; the
 * `without` arm writes "good" for odd k and "bad" for even k.
 */
export async function writeReplaySuite(
  root: string,
  options: { requirements: number; verifierSleepSeconds: number },
): Promise<{ suite: string; predictions: string }> {
  const { repo, commit } = await tinyRepository(root);
  const suite = join(root, "suite");
  const skill = await writeAlphaSkill(suite, {
    suiteYaml:
      "format: skillsmith-suite/1\nname: tiny\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 30 }\n",
    skillYaml: `repository:\n  path: ${repo}\n  commit: ${commit}\n  name: tiny\n`,
    skillMarkdown:
      "---\nname: alpha\ndescription: Write the word good into result files. Use when a task asks for a result file.\n---\n\n# Alpha\n\nWrite `good`.\n",
  });
  const lines: string[] = [];
  for (let k = 1; k <= options.requirements; k += 1) {
    await writeRequirement(skill, `r${k}`, {
      requirementMarkdown: `## Background\n\nA tiny repository.\n\n## Requirement\n\nWrite the word good into out/r${k}.txt.\n\n## File Operations\n\n- \`out/r${k}.txt\`\n\n## Acceptance Criteria\n\n- out/r${k}.txt exists\n- it says good\n`,
      checkScript: `file="$SKILLSMITH_WORKSPACE/out/r${k}.txt"
sleep ${options.verifierSleepSeconds}
{
  echo '<testsuite name="r${k}">'
  if [ -f "$file" ]; then echo '<testcase classname="r" name="exists"/>'; else echo '<testcase classname="r" name="exists"><failure message="missing"/></testcase>'; fi
  if [ "$(cat "$file" 2>/dev/null)" = good ]; then echo '<testcase classname="r" name="good"/>'; else echo '<testcase classname="r" name="good"><failure message="not good"/></testcase>'; fi
  echo '</testsuite>'
} > junit.xml
`,
      verifierYaml:
        "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\ntimeoutSeconds: 30\n",
    });
    lines.push(
      JSON.stringify({
        skill: "alpha",
        requirement: `r${k}`,
        arm: "without",
        patch: newFilePatch(`out/r${k}.txt`, k % 2 === 1 ? "good" : "bad"),
      }),
      JSON.stringify({
        skill: "alpha",
        requirement: `r${k}`,
        arm: "with",
        patch: newFilePatch(`out/r${k}.txt`, "good"),
      }),
    );
  }
  const predictions = join(root, "predictions.jsonl");
  await writeFile(predictions, `${lines.join("\n")}\n`);
  return { suite, predictions };
}

/**
 * Removes a test's root folder after runs in it. A run killed with -9 cannot unmount its overlay
 * workspace, so mounts left below `root` are released first, deepest first.
 */
export async function removeRunRoot(root: string): Promise<void> {
  const mounts = await readFile("/proc/mounts", "utf8").catch(() => "");
  const leftovers = mounts
    .split("\n")
    .map((line) => line.split(" ")[1] ?? "")
    .filter((point) => point.startsWith(root))
    .sort((left, right) => right.length - left.length);
  for (const point of leftovers) await runProcess("umount", ["-l", point]);
  await rm(root, { recursive: true, force: true });
}
