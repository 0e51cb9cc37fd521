/**
 * The generated suite the runner and queue benchmarks time: one skill, `requirements`
 * requirements, a git repository (20 small files unless one is given), the replay agent. Requirement k asks for
 * `out/r<k>.txt`; its shell verifier (after sleeping `verifierSleepSeconds`, the share of a real
 * run spent waiting) writes JUnit XML with one check, that the file exists. Both arms' predictions
 * create the file, so every run scores 100% as designed.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { git } from "../test/support/git.js";
import { newFilePatch, writeAlphaSkill, writeRequirement } from "../test/support/suites.js";

export async function writeBenchSuite(
  root: string,
  options: {
    name: string;
    requirements: number;
    verifierSleepSeconds?: number;
    /** A repository to use (a folder, or a `.bundle` file) instead of the generated 20-file one. */
    repository?: { readonly path: string; readonly commit: string };
    /**
     * Setup commands of the base. Without them the runner detects a setup from the repository's
     * manifests (fastapi's would `pip install`, which needs the network): a real repository
     * timed for overhead passes a no-op.
     */
    setup?: readonly string[];
  },
): Promise<{ suite: string; predictions: string }> {
  const { path: repo, commit } = options.repository ?? (await twentyFileRepository(root));
  const suite = join(root, "suite");
  const skill = await writeAlphaSkill(suite, {
    suiteYaml: `format: skillsmith-suite/1\nname: ${options.name}\nconfigurations:\n  - id: replay\n    agent: replay\n    limits: { timeoutSeconds: 60 }\n`,
    skillYaml: `repository:\n  ${repo.endsWith(".bundle") ? "bundle" : "path"}: ${repo}\n  commit: ${commit}\n  name: benchrepo\n${options.setup === undefined ? "" : `  setup: ${JSON.stringify(options.setup)}\n`}`,
    skillMarkdown:
      "---\nname: alpha\ndescription: Write result files. Use when a task asks for one.\n---\n\n# Alpha\n",
  });
  const sleep =
    options.verifierSleepSeconds === undefined ? "" : `sleep ${options.verifierSleepSeconds}\n`;
  const lines: string[] = [];
  for (let k = 1; k <= options.requirements; k += 1) {
    await writeRequirement(skill, `r${k}`, {
      requirementMarkdown: `## Requirement\n\nWrite out/r${k}.txt.\n\n## File Operations\n\n- \`out/r${k}.txt\`\n\n## Acceptance Criteria\n\n- it exists\n`,
      checkScript: `${sleep}if [ -f "$SKILLSMITH_WORKSPACE/out/r${k}.txt" ]; then r='<testcase classname="r" name="exists"/>'; else r='<testcase classname="r" name="exists"><failure message="missing"/></testcase>'; fi\necho "<testsuite name=\\"r\\">$r</testsuite>" > junit.xml\n`,
      verifierYaml: "command: sh check.sh\nfiles: [check.sh]\njunit: junit.xml\n",
    });
    for (const arm of ["without", "with"]) {
      const patch = newFilePatch(`out/r${k}.txt`, arm);
      lines.push(JSON.stringify({ skill: "alpha", requirement: `r${k}`, arm, patch }));
    }
  }
  const predictions = join(root, "predictions.jsonl");
  await writeFile(predictions, `${lines.join("\n")}\n`);
  return { suite, predictions };
}

async function twentyFileRepository(root: string): Promise<{ path: string; commit: string }> {
  const repo = join(root, "repo");
  await mkdir(join(repo, "src"), { recursive: true });
  for (let index = 0; index < 20; index += 1) {
    await writeFile(join(repo, "src", `module${index}.txt`), `content ${index}\n`.repeat(50));
  }
  await git(repo, "init", "-q", "-b", "main");
  await git(repo, "add", "-A");
  await git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "init");
  return { path: repo, commit: await git(repo, "rev-parse", "HEAD") };
}
