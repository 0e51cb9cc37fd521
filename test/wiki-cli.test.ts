/**
 * `skillsmith wiki build | search | export` in-process on a fresh commander program with
 * `registerWiki` (the command group is registered in the CLI program by the lead), the
 * scripted model server playing the distiller over real HTTP.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Command, CommanderError } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerWiki } from "../src/cli/commands/wiki.js";
import type { CliIo, CommandContext } from "../src/cli/context.js";
import { isSkillsmithError } from "../src/core/errors.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { validateSkillFolder } from "../src/skill/index.js";
import { skillId } from "../src/wiki/meta.js";
import { selfLoopingLink } from "./support/temporary.js";
import { answer, skill, writeResources } from "./support/wiki.js";
import { writeGeneratedWiki } from "./support/wiki-cards.js";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(
  argv: string[],
  env: Record<string, string | undefined> = {},
  cwd = process.cwd(),
): Promise<Run> {
  let stdout = "";
  let stderr = "";
  let code = 0;
  const io: CliIo = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    cwd,
    env: { PATH: process.env.PATH, ...env },
  };
  const context: CommandContext = { io, exit: (value) => (code = Math.max(code, value)) };
  const program = new Command("skillsmith")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  registerWiki(program, context);
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) return { code: 2, stdout, stderr };
    if (isSkillsmithError(error) && (error.family === "input" || error.family === "usage"))
      return { code: 2, stdout, stderr: `${stderr}error: ${error.message}\n` };
    throw error;
  }
  return { code, stdout, stderr };
}

let root: string;
let server: ScriptedServer;
let env: Record<string, string>;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-cli-"));
  await writeResources(join(root, "resources"));
  server = await startScriptedServer({
    script: {
      rules: [
        {
          match: { lastUserMessage: "Resource path: textkit" },
          reply: answer([
            skill({
              skill_name: "Slugify titles",
              provenance: { source_path: "textkit", node_index: 0 },
            }),
          ]),
        },
        {
          match: { lastUserMessage: "Resource path: grid-centering.html" },
          reply: answer([
            skill({
              skill_name: "Nope",
              text_body: "tiny",
              provenance: { source_path: "grid-centering.html", node_index: 0 },
            }),
          ]),
        },
      ],
      fallback: answer([]),
    },
  });
  env = { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: server.url };
});
afterAll(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

describe("skillsmith wiki (CLI)", () => {
  it("builds with progress on stderr and a summary on stdout, then searches and exports", async () => {
    const build = await run(
      [
        "wiki",
        "build",
        "--domain",
        "demo",
        "--resources",
        "resources",
        "--wiki",
        "w",
        "--model",
        "anthropic:claude-haiku-4-5",
      ],
      env,
      root,
    );
    expect(build.code).toBe(0);
    expect(build.stderr).toContain("distilling textkit");
    expect(build.stdout).toContain("accepted        1");
    expect(build.stdout).toContain("rejected        completeness 1, provenance 0, modality 0");

    const search = await run(
      ["wiki", "search", "slugify url titles", "--wiki", "w", "--json"],
      {},
      root,
    );
    expect(search.code).toBe(0);
    const parsed = JSON.parse(search.stdout) as { shortlist: { card: { skill_id: string } }[] };
    expect(parsed.shortlist[0]?.card.skill_id).toBe(skillId("demo", "textkit", 0));

    const exported = await run(
      ["wiki", "export", skillId("demo", "textkit", 0), "--wiki", "w", "--out", "skills"],
      {},
      root,
    );
    expect(exported.code).toBe(0);
    expect((await validateSkillFolder(join(root, "skills", "slugify-titles"))).valid).toBe(true);
    expect(await readFile(join(root, "skills", "slugify-titles", "SKILL.md"), "utf8")).toContain(
      "name: slugify-titles",
    );
  });

  it("prints ids every command takes, says which wiki it searched, and one line for no hit", async () => {
    const search = await run(["wiki", "search", "slugify url titles", "--wiki", "w"], {}, root);
    expect(search.code).toBe(0);
    expect(search.stdout.split("\n")[0]).toContain(`in wiki ${join(root, "w")}`);
    const printed = [...new Set(search.stdout.match(/\b[0-9a-f]{40}\b/g) ?? [])];
    expect(printed).toContain(skillId("demo", "textkit", 0));
    for (const [index, id] of printed.entries()) {
      const out = join("ids", String(index));
      const exported = await run(["wiki", "export", id, "--wiki", "w", "--out", out], {}, root);
      expect(exported.code, exported.stderr).toBe(0);
    }
    // The 12 digits the search printed before this change are still accepted.
    const short = skillId("demo", "textkit", 0).slice(0, 12);
    const byPrefix = await run(
      ["wiki", "export", short, "--wiki", "w", "--out", "ids-short", "--json"],
      {},
      root,
    );
    expect(byPrefix.code, byPrefix.stderr).toBe(0);
    expect(JSON.parse(byPrefix.stdout).name).toBe("slugify-titles");
    const tooShort = await run(["wiki", "export", "ab", "--wiki", "w", "--out", "x"], {}, root);
    expect(tooShort.code).toBe(2);
    expect(tooShort.stderr).toContain("at least 4 hexadecimal digits");

    const nothing = await run(["wiki", "search", "zzqqxx wwvvyy", "--wiki", "w"], {}, root);
    expect(nothing.code).toBe(0);
    expect(nothing.stdout).toBe(`no entry matches "zzqqxx wwvvyy" in wiki ${join(root, "w")}\n`);
    const json = await run(["wiki", "search", "slugify", "--wiki", "w", "--json"], {}, root);
    expect(JSON.parse(json.stdout).wiki).toBe(join(root, "w"));
  });

  it("refuses an ambiguous id prefix naming the ids it matches", async () => {
    const wiki = join(root, "ambiguous");
    // Generated entry 0 has text only; its meta is written under two ids sharing "abcd".
    const [meta] = await writeGeneratedWiki(wiki, 1, { domains: ["demo"] });
    if (meta === undefined) throw new Error("no generated entry");
    const ids = [`abcd${"1".repeat(36)}`, `abcd${"2".repeat(36)}`];
    for (const id of ids) {
      await mkdir(join(wiki, "demo", id, "text"), { recursive: true });
      await writeFile(join(wiki, "demo", id, "text", "overview.md"), "An overview of the entry.\n");
      await writeFile(
        join(wiki, "demo", id, "meta.json"),
        JSON.stringify({ ...meta, skill_id: id }),
      );
    }
    await rm(join(wiki, "demo", meta.skill_id), { recursive: true });
    const result = await run(["wiki", "export", "abcd", "--wiki", wiki, "--out", "x"], {}, root);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`"abcd" is the start of 2 skill ids`);
    for (const id of ids) expect(result.stderr).toContain(id);
    const one = await run(
      ["wiki", "export", "abcd2", "--wiki", wiki, "--out", "amb", "--json"],
      {},
      root,
    );
    expect(one.code, one.stderr).toBe(0);
  });

  it("reports user mistakes with exit code 2 and names the file", async () => {
    const missing = await run(
      [
        "wiki",
        "build",
        "--domain",
        "demo",
        "--resources",
        "nowhere",
        "--wiki",
        "w2",
        "--model",
        "anthropic:claude-haiku-4-5",
      ],
      env,
      root,
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(join(root, "nowhere"));
    const badDomain = await run(
      [
        "wiki",
        "build",
        "--domain",
        "Bad Domain",
        "--resources",
        "resources",
        "--model",
        "anthropic:claude-haiku-4-5",
      ],
      env,
      root,
    );
    expect(badDomain.code).toBe(2);
    expect(badDomain.stderr).toContain('domain "Bad Domain"');
    const noModel = await run(["wiki", "search", "x", "--select", "--wiki", "w"], {}, root);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain("--select needs --model");
    const notWiki = await run(["wiki", "search", "x", "--wiki", "resources"], {}, root);
    expect(notWiki.code).toBe(2);
    expect(notWiki.stderr).toContain("not a skill wiki");
    expect(existsSync(join(root, "w2"))).toBe(false);
  });

  it("searches the shipped example wiki when there is no ./skills_wiki", async () => {
    const result = await run(["wiki", "search", "navigation menu that wraps flexbox"], {}, root);
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")[1]).toContain("Wrapping navigation bar with flexbox");
  });

  it("refuses a ./skills_wiki that is there but unreadable instead of searching the example", async () => {
    const cwd = await mkdtemp(join(tmpdir(), "wiki-unreadable-"));
    try {
      await selfLoopingLink(cwd, "skills_wiki");
      const result = await run(["wiki", "search", "navigation menu that wraps flexbox"], {}, cwd);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(join(cwd, "skills_wiki"));
      expect(result.stderr).toContain("ELOOP");
      expect(result.stdout).toBe("");
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it("serves MCP over HTTP with a generated token printed on stdout, and stops on request", async () => {
    let stdout = "";
    let stop = () => {};
    const io: CliIo = { stdout: (text) => (stdout += text), stderr: () => {}, cwd: root, env: {} };
    const program = new Command("skillsmith").exitOverride();
    registerWiki(
      program,
      { io, exit: () => {} },
      { waitForStop: () => new Promise<void>((resolve) => (stop = resolve)) },
    );
    const serving = program.parseAsync(["wiki", "serve-mcp", "--wiki", "w", "--http"], {
      from: "user",
    });
    let failed: unknown;
    serving.catch((error: unknown) => {
      failed = error;
    });
    while (stdout === "" && failed === undefined)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(failed).toBeUndefined();
    const { url, token } = JSON.parse(stdout) as { url: string; token: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: "cli-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const result = (await client.callTool({ name: "list_skills", arguments: {} })) as {
      structuredContent?: { total?: number };
    };
    expect(result.structuredContent?.total).toBe(1);
    await client.close();
    stop();
    await serving;
    await expect(fetch(url, { method: "POST" })).rejects.toThrow();
  });
});
