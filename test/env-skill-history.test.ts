/**
 * Attack: the benchmark repository commits agent skills. Before, preparation deleted them from the
 * working tree only, so an agent in the without-skill arm could run `git checkout -- .` (the files
 * came back), `git status` (listed them as deleted) or `git log -p` (printed them). Now the
 * prepared base's history no longer holds them: the agent's own commands, run in a materialised
 * workspace exactly as its shell would, find none of the skill text, in any object git keeps.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runProcess } from "../src/core/process.js";
import { filterFastExport, isAgentSkillPath } from "../src/env/workspace/history.js";
import { materialiseWorkspace } from "../src/env/workspace/materialise.js";
import { prepareBase } from "../src/env/workspace/prepare.js";
import { gitSync as git } from "./support/git.js";

const SECRETS = [
  "SECRET-ALPHA-1f3c",
  "SECRET-ALPHA-v2-9d2e",
  "SECRET-BETA-77ab",
  "SECRET-OTHER-0c4d",
];
/** A multi-byte message, so a stream decoded as text (byte counts broken) would fail the import. */
const UNICODE_MESSAGE = "ajoute la fonction größer ✓";

let scratch: string;
let repository: string;
let pinned: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "skillsmith-skill-history-"));
  repository = join(scratch, "repo");
  await mkdir(join(repository, ".claude", "skills", "alpha"), { recursive: true });
  await mkdir(join(repository, "docs", ".codex", "skills", "beta"), { recursive: true });
  git(repository, "init", "-q", "-b", "main");
  await writeFile(join(repository, "README.md"), "demo\n");
  await writeFile(join(repository, ".claude", "skills", "alpha", "SKILL.md"), `${SECRETS[0]}\n`);
  await writeFile(
    join(repository, "docs", ".codex", "skills", "beta", "SKILL.md"),
    `${SECRETS[2]}\n`,
  );
  // Not a skill folder: `skills` directly under the root and a file called skills.
  await mkdir(join(repository, "skills"), { recursive: true });
  await writeFile(join(repository, "skills", "keep.txt"), "kept\n");
  git(repository, "add", "-A");
  git(repository, "commit", "-q", "-m", "init");
  await writeFile(join(repository, ".claude", "skills", "alpha", "SKILL.md"), `${SECRETS[1]}\n`);
  await writeFile(join(repository, "app.py"), "print('hi')\n");
  git(repository, "add", "-A");
  git(repository, "commit", "-q", "-m", UNICODE_MESSAGE);
  // Deleted before the pinned commit: the tree clean-up never sees it, the history did.
  git(repository, "rm", "-q", "-r", "docs/.codex");
  git(repository, "commit", "-q", "-m", "drop beta");
  pinned = git(repository, "rev-parse", "HEAD");
  // A later commit and another branch: pruned anyway (later history is hidden).
  git(repository, "checkout", "-q", "-b", "other");
  await writeFile(join(repository, ".claude", "skills", "alpha", "SKILL.md"), `${SECRETS[3]}\n`);
  git(repository, "commit", "-q", "-am", "other");
  git(repository, "checkout", "-q", "main");
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function shell(cwd: string, script: string): Promise<string> {
  const result = await runProcess("sh", ["-c", script], { cwd, timeoutMs: 60_000 });
  return `${result.stdout}${result.stderr}`;
}

describe("skills committed in the benchmark repository", () => {
  it("leave the prepared base's history: checkout, status, log -p and every object show none", async () => {
    const base = await prepareBase({
      source: repository,
      commit: pinned,
      cacheDir: join(scratch, "cache"),
    });
    expect(base.removedSkillFolders).toEqual([".claude/skills"]);
    // Commits 1 and 2 touched skill folders (3 deleted beta's, which counts too).
    expect(base.skillHistory?.commitsWithSkills).toBe(3);
    const workspace = await materialiseWorkspace(base);
    try {
      expect(await shell(workspace.path, "git status --porcelain")).toBe("");
      // What an agent would run to get the skill back or read it (older commits included).
      const output = await shell(
        workspace.path,
        [
          "git status --porcelain",
          "git checkout -- . 2>&1",
          "git restore --source=HEAD~2 -- . 2>&1",
          "ls -R .claude docs 2>&1",
          "git log --all -p",
          "git reflog --all",
          "git fsck --lost-found --unreachable 2>&1",
          "git cat-file --batch-all-objects --batch",
        ].join("; "),
      );
      for (const secret of SECRETS) expect(output).not.toContain(secret);
      expect(
        await shell(workspace.path, "find . -path ./.git -prune -o -name SKILL.md -print"),
      ).toBe("");
      // The rest of the history is intact: messages (multi-byte ones too), files, order.
      expect(git(workspace.path, "log", "--format=%s").split("\n")).toEqual([
        "drop beta",
        UNICODE_MESSAGE,
        "init",
      ]);
      expect(git(workspace.path, "ls-tree", "-r", "--name-only", "HEAD").split("\n")).toEqual([
        "README.md",
        "app.py",
        "skills/keep.txt",
      ]);
      expect(await readFile(join(workspace.path, "skills", "keep.txt"), "utf8")).toBe("kept\n");
    } finally {
      await workspace.dispose();
    }
  });

  it("a repository without committed skills keeps its commit ids", async () => {
    const plain = join(scratch, "plain");
    await mkdir(plain);
    git(plain, "init", "-q", "-b", "main");
    await writeFile(join(plain, "a.txt"), "a\n");
    git(plain, "add", "-A");
    git(plain, "commit", "-q", "-m", "a");
    const commit = git(plain, "rev-parse", "HEAD");
    const base = await prepareBase({ source: plain, commit, cacheDir: join(scratch, "cache") });
    expect(base.skillHistory).toBeUndefined();
    expect(git(base.tree, "rev-parse", "HEAD")).toBe(commit);
  });
});

describe("the history filter", () => {
  it("knows skill paths by the clean-up's rule", () => {
    expect(isAgentSkillPath(".claude/skills/a/SKILL.md")).toBe(true);
    expect(isAgentSkillPath("deep/er/.agents/skills/x/y.md")).toBe(true);
    expect(isAgentSkillPath('"odd name/.cursor/skills/\\303\\251/SKILL.md"')).toBe(true);
    expect(isAgentSkillPath("skills/a.md")).toBe(false);
    expect(isAgentSkillPath(".claude/settings.json")).toBe(false);
    expect(isAgentSkillPath(".claude/skills")).toBe(false);
    expect(isAgentSkillPath("node_modules/p/.claude/skills/a/SKILL.md")).toBe(false);
  });

  it("drops only skill-path operations and copies message bytes exactly", () => {
    const message = Buffer.from("größer\nM 100644 abc .claude/skills/in-message\n", "utf8");
    const stream = Buffer.concat([
      Buffer.from("commit refs/x\nmark :1\ncommitter a <a> 0 +0000\n"),
      Buffer.from(`data ${message.length}\n`),
      message,
      Buffer.from(
        "M 100644 0123 .claude/skills/a/SKILL.md\nM 100644 4567 src/a.py\nD .agents/skills/b\nD src/old.py\n\n",
      ),
    ]);
    const { output, dropped } = filterFastExport(stream);
    expect(dropped).toBe(2);
    // Expected by hand: the two skill operations removed, the message (which mentions one) kept.
    expect(output.toString("utf8")).toBe(
      `commit refs/x\nmark :1\ncommitter a <a> 0 +0000\ndata ${message.length}\ngrößer\nM 100644 abc .claude/skills/in-message\nM 100644 4567 src/a.py\nD src/old.py\n\n`,
    );
  });
});
