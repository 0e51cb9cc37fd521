import { execFile, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runInProcess } from "./support/cli.js";

const repositoryRoot = resolve(import.meta.dirname, "..");
const binary = resolve(repositoryRoot, "dist", "cli", "main.js");

const run = runInProcess;

describe("CLI program (in-process)", () => {
  it("prints help with every command group and exits 0", async () => {
    const result = await run(["--help"]);
    expect(result.code).toBe(0);
    for (const group of ["quickstart", "skill", "stats", "model", "bench"]) {
      expect(result.stdout).toContain(group);
    }
  });

  it("exits 2 on an unknown command, with a message on stderr only", async () => {
    const result = await run(["no-such-command"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/unknown command/);
  });

  it("exits 2 on an unknown option", async () => {
    const result = await run(["quickstart", "--no-such-flag"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown option/);
  });

  it("prints the package version", async () => {
    const result = await run(["--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe.skipIf(!existsSync(binary))("CLI binary (dist/, built by `npm test`'s pretest)", () => {
  it("runs as a process and returns the exit code of a usage error", async () => {
    const execution = promisify(execFile)(process.execPath, [binary, "no-such-command"]);
    await expect(execution).rejects.toMatchObject({ code: 2 });
  });

  it("answers --help with exit 0", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [binary, "--help"]);
    expect(stdout).toContain("Usage: skillsmith");
  });
});

const npmAvailable =
  spawnSync("npm", ["--version"], { encoding: "utf8" }).status === 0 && existsSync(binary);

describe.skipIf(!npmAvailable)("`npm start` puts skillsmith on PATH [needs npm and dist/]", () => {
  it("links the clone's binary into the npm prefix, so a new shell elsewhere finds it", async () => {
    const prefix = await mkdtemp(join(tmpdir(), "skillsmith-prefix-"));
    try {
      // The start script with `--help` links, then asks the quickstart only for its help.
      const start = spawnSync(
        process.execPath,
        [join(repositoryRoot, "scripts", "start.mjs"), "--help"],
        {
          cwd: repositoryRoot,
          encoding: "utf8",
          env: { ...process.env, npm_config_prefix: prefix, SKILLSMITH_NO_LINK: "" },
        },
      );
      expect(start.status, start.stderr).toBe(0);
      expect(start.stdout).toContain("Usage: skillsmith quickstart");
      expect(start.stderr).toContain(join(prefix, "bin", "skillsmith"));
      // A new shell with nothing of this process's environment but the prefix on PATH.
      const shell = spawnSync("bash", ["-c", "cd / && skillsmith --version"], {
        encoding: "utf8",
        env: { HOME: prefix, PATH: `${join(prefix, "bin")}:/usr/local/bin:/usr/bin:/bin` },
      });
      expect(shell.status, shell.stderr).toBe(0);
      expect(shell.stdout.trim()).toBe(
        (
          JSON.parse(readFileSync(join(repositoryRoot, "package.json"), "utf8")) as {
            version: string;
          }
        ).version,
      );
    } finally {
      await rm(prefix, { recursive: true, force: true });
    }
  }, 120_000);
});

/** Every `skillsmith …` command line in the README's and docs' shell blocks. */
function documentedCommands(): { file: string; words: string[] }[] {
  const files = [
    "README.md",
    ...readdirSync(join(repositoryRoot, "docs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => join("docs", name)),
  ];
  const commands: { file: string; words: string[] }[] = [];
  for (const file of files) {
    const text = readFileSync(join(repositoryRoot, file), "utf8");
    for (const block of text.matchAll(/```(?:sh|bash|console)\n([\s\S]*?)```/g)) {
      const joined = (block[1] ?? "").replace(/\\\n\s*/g, " ");
      for (const raw of joined.split("\n")) {
        const line = raw
          .replace(/^\$\s*/, "")
          .replace(/\s+#.*$/, "")
          .trim();
        if (!line.startsWith("skillsmith ")) continue;
        commands.push({ file, words: line.split(/\s+/).slice(1) });
      }
    }
  }
  return commands;
}

describe("the commands the README and docs print", () => {
  it("name commands that exist, with options each command accepts", async () => {
    const commands = documentedCommands();
    expect(commands.length).toBeGreaterThan(3);
    for (const { file, words } of commands) {
      // The command path is the leading words that are not options or arguments.
      const path: string[] = [];
      let help = (await run(["--help"])).stdout;
      for (const word of words) {
        if (word.startsWith("-")) break;
        const candidate = await run([...path, word, "--help"]);
        if (candidate.code !== 0 || candidate.stdout === help) break;
        path.push(word);
        help = candidate.stdout;
      }
      expect(path.length, `${file}: skillsmith ${words.join(" ")}`).toBeGreaterThan(0);
      for (const word of words) {
        const flag = /^(--[a-z][a-z0-9-]*)/.exec(word)?.[1];
        if (flag === undefined || flag === "--help") continue;
        expect(help, `${file}: skillsmith ${words.join(" ")} — ${flag}`).toContain(flag);
      }
    }
  }, 120_000);
});

describe("the README is a front page", () => {
  const readme = readFileSync(join(repositoryRoot, "README.md"), "utf8");

  it("has a quick start of exactly the two commands, and the second is the test script", () => {
    const section = readme.split("## Quick start")[1]?.split("\n## ")[0] ?? "";
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
    expect(block.trim().split("\n")).toEqual(["npm ci && npm start", "npm test"]);
    const manifest = JSON.parse(readFileSync(join(repositoryRoot, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    // `npm start` links the CLI before the quick start; CI runs the same `npm test`.
    expect(manifest.scripts.start).toContain("scripts/start.mjs");
    expect(readFileSync(join(repositoryRoot, ".ci", "run"), "utf8")).toMatch(/^npm test$/m);
  });

  it("is short, says what runs need, and every docs link it gives exists", () => {
    expect(readme.split("\n").length).toBeLessThan(120);
    for (const tool of ["bubblewrap", "git", "python3-pytest"]) expect(readme).toContain(tool);
    const links = [...readme.matchAll(/\]\(((?:docs\/)[^)#]+)\)/g)].map((match) => match[1] ?? "");
    expect(links.length).toBeGreaterThan(5);
    for (const link of links) expect(existsSync(join(repositoryRoot, link)), link).toBe(true);
  });
});
