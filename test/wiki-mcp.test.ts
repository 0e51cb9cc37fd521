/**
 * The wiki over MCP with the SDK's own client: over stdio against a spawned server process, and
 * over streamable HTTP on 127.0.0.1 with the bearer token.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { runProcess } from "../src/core/process.js";
import { UnavailableRunner } from "../src/wiki/gates.js";
import { openWikiServer, serveWikiHttp } from "../src/wiki/mcp.js";
import { cliNodeArguments } from "./support/cli.js";
import { handSkillId, handSkills, TINY_PNG, writeHandWiki } from "./support/wiki.js";

/** The real CLI (built when `dist/` exists), as `skillsmith wiki serve-mcp --wiki <dir>`. */
const serveMcp = (wiki: string) => [...cliNodeArguments(), "wiki", "serve-mcp", "--wiki", wiki];
const hasBwrap = existsSync("/usr/bin/bwrap");
let root: string;
let client: Client;
const idOf = (name: string) =>
  handSkillId(handSkills.find((each) => each.name === name) ?? (handSkills[0] as never));

type ToolResult = {
  content: { type: string; text?: string; data?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-mcp-"));
  await writeHandWiki(join(root, "wiki"));
  client = new Client({ name: "wiki-test", version: "1.0.0" });
  // Through tsx (no dist/), the CLI's first answer took over the client's default 60 s at load 35
  // with two busy loops.
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: serveMcp(join(root, "wiki")),
      stderr: "pipe",
    }),
    { timeout: 240_000 },
  );
}, 300_000);
afterAll(async () => {
  await client?.close();
  await rm(root, { recursive: true, force: true });
});

describe("MCP over stdio (spawned `skillsmith wiki serve-mcp`)", () => {
  it("offers the five tools", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "apply",
      "list_categories",
      "list_skills",
      "read_skill",
      "search",
    ]);
  });

  it("lists categories and paged verified cards", async () => {
    const categories = await call("list_categories", { domain: "web-frontend" });
    const domains = categories.structuredContent?.domains as { categories: { name: string }[] }[];
    expect(domains[0]?.categories.map((node) => node.name)).toEqual([
      "accessibility",
      "components",
      "layout",
    ]);
    const skills = await call("list_skills", {});
    expect(skills.structuredContent?.total).toBe(4);
    expect(skills.structuredContent?.next_cursor).toBeNull();
    const layout = await call("list_skills", {
      domain: "web-frontend",
      category: "layout",
      include_unverified: true,
    });
    expect(
      ((layout.structuredContent?.skills as { skill_name: string }[] | undefined) ?? [])
        .map((card) => card.skill_name)
        .sort(),
    ).toEqual(["Center with CSS grid", "Legacy float layout"]);
  });

  it("reads one modality: text, code, and images for visual", async () => {
    const text = await call("read_skill", {
      skill_id: idOf("Center with CSS grid"),
      modality: "text",
    });
    expect(JSON.stringify(text.structuredContent)).toContain("How center with css grid works");
    const code = await call("read_skill", {
      skill_id: idOf("Center with CSS grid"),
      modality: "code",
    });
    expect((code.structuredContent?.files as { text: string }[] | undefined)?.[0]?.text).toBe(
      "printf 'centered:%s\\n' \"$(cat)\"\n",
    );
    const visual = await call("read_skill", {
      skill_id: idOf("Check colour contrast"),
      modality: "visual",
    });
    const image = visual.content.find((block) => block.type === "image");
    expect(Buffer.from(image?.data ?? "", "base64").equals(TINY_PNG)).toBe(true);
    const missing = await call("read_skill", { skill_id: "0".repeat(40), modality: "text" });
    expect(missing.isError).toBe(true);
  });

  it("searches", async () => {
    const result = await call("search", { query: "center with grid" });
    const shortlist = result.structuredContent?.shortlist as { card: { skill_id: string } }[];
    expect(shortlist[0]?.card.skill_id).toBe(idOf("Center with CSS grid"));
    const select = await call("search", { query: "grid", select: true });
    expect(select.isError).toBe(true);
  });

  it("shows a text-only entry as found but never executed, and takes the ids the CLI prints", async () => {
    // The hand wiki writes it as an older build did (verified, exec_ok "unknown", no code).
    const result = await call("search", { query: "contrast colour accessibility" });
    const shortlist = result.structuredContent?.shortlist as {
      card: { skill_name: string; exec_ok: unknown; validation_status: string };
    }[];
    const card = shortlist.find((hit) => hit.card.skill_name === "Check colour contrast")?.card;
    expect(card?.validation_status).toBe("verified");
    expect(card?.exec_ok).toBe("not-applicable");
    const ran = shortlist.find((hit) => hit.card.skill_name === "Center with CSS grid")?.card;
    if (ran !== undefined) expect(ran.exec_ok).not.toBe("not-applicable");
    const short = idOf("Check colour contrast").slice(0, 12);
    const meta = await call("read_skill", { skill_id: short, modality: "meta" });
    expect(meta.isError).not.toBe(true);
    expect(meta.structuredContent?.skill_name).toBe("Check colour contrast");
    const run = await call("apply", {
      skill_id: short,
      capability: "run-code",
      input: { stdin: "" },
    });
    expect(JSON.stringify(run.structuredContent ?? run.content)).not.toContain('"passed"');
  });

  it("reports each candidate's score and the threshold, and returns none when nothing fits", async () => {
    const fits = await call("search", { query: "center with grid" });
    const found = fits.structuredContent as {
      threshold: { min_score: number };
      best_score: number;
      shortlist: { score: number }[];
      selected: { score: number; reason: string }[];
    };
    expect(found.threshold.min_score).toBe(2);
    expect(found.shortlist.length).toBeGreaterThan(0);
    for (const hit of found.shortlist) expect(hit.score).toBeGreaterThanOrEqual(2);
    expect(found.selected[0]?.score).toBe(found.best_score);
    // No card shares a word with this query: no candidates, and a note saying so.
    const nothing = await call("search", { query: "kubernetes helm chart rollback" });
    expect(nothing.structuredContent).toMatchObject({ shortlist: [], selected: [] });
    expect(String(nothing.structuredContent?.note)).toMatch(/no skill/);
    // Raising the threshold above the best score empties the answer too, instead of the top five.
    const strict = await call("search", {
      query: "center with grid",
      min_score: found.best_score + 0.001,
    });
    expect(strict.structuredContent).toMatchObject({ shortlist: [], selected: [] });
    expect(strict.structuredContent?.below_threshold).toBeGreaterThanOrEqual(
      found.shortlist.length,
    );
    expect(String(strict.structuredContent?.note)).toContain("below the threshold");
  });

  it("serves the verified entries by the MCP Skills extension (SEP-2640)", async () => {
    const capabilities = client.getServerCapabilities() as Record<string, unknown>;
    expect(
      (capabilities.extensions as Record<string, unknown>)["io.modelcontextprotocol/skills"],
    ).toEqual({
      directoryRead: true,
    });
    const listSchema = z
      .object({
        skills: z.array(
          z.object({
            uri: z.string(),
            frontmatter: z.record(z.string(), z.unknown()),
            resources: z.array(z.object({ uri: z.string(), digest: z.string(), size: z.number() })),
          }),
        ),
      })
      .passthrough();
    const list = listSchema.parse(
      await client.request(
        { method: "skills/list", params: {} } as unknown as Parameters<Client["request"]>[0],
        listSchema,
      ),
    );
    // The four verified entries of the hand wiki, each as the skill `wiki export` writes.
    expect(list.skills).toHaveLength(4);
    const center = list.skills.find(
      (skill) => skill.uri === "skill://web-frontend/center-with-css-grid/SKILL.md",
    );
    expect(center?.frontmatter.name).toBe("center-with-css-grid");
    for (const resource of center?.resources ?? []) {
      const read = await client.readResource({ uri: resource.uri });
      const content = read.contents[0] as { text?: string; blob?: string };
      const bytes =
        content.text !== undefined
          ? Buffer.from(content.text, "utf8")
          : Buffer.from(content.blob ?? "", "base64");
      expect(bytes.length).toBe(resource.size);
      expect(`sha256:${createHash("sha256").update(bytes).digest("hex")}`).toBe(resource.digest);
    }
    expect(center?.resources.map((resource) => resource.uri)).toContain(
      "skill://web-frontend/center-with-css-grid/references/provenance.md",
    );
  });

  it("applies a declared capability and returns not-applicable for a missing one", async () => {
    const missing = await call("apply", {
      skill_id: idOf("Center with CSS grid"),
      capability: "render-page",
    });
    expect(missing.structuredContent).toEqual({
      status: "not-applicable",
      capability: "render-page",
      skill_id: idOf("Center with CSS grid"),
      reason: 'domain "web-frontend" does not offer the capability "render-page"',
      available: ["run-code", "instructions"],
    });
    const noCode = await call("apply", {
      skill_id: idOf("Responsive flexbox navigation bar"),
      capability: "run-code",
    });
    expect(noCode.structuredContent?.status).toBe("not-applicable");
    expect(noCode.structuredContent?.reason).toBe("the skill has no code");
    const otherDomain = await call("apply", {
      skill_id: idOf("Parse CSV rows"),
      capability: "run-code",
    });
    expect(otherDomain.structuredContent?.status).toBe("not-applicable");
    const instructions = await call("apply", {
      skill_id: idOf("Check colour contrast"),
      capability: "instructions",
    });
    expect(instructions.structuredContent?.status).toBe("applied");
    const run = await call("apply", {
      skill_id: idOf("Center with CSS grid"),
      capability: "run-code",
      input: { stdin: "box" },
    });
    if (hasBwrap)
      // The program's own output comes back: the script prints "centered:" and its stdin.
      expect(run.structuredContent).toMatchObject({
        status: "applied",
        output: { status: "passed", stdout: "centered:box\n", stderr: "" },
      });
    else expect(run.structuredContent?.status).toBe("not-applicable");
  });

  it("documents apply's input keys in its schema", async () => {
    const { tools } = await client.listTools();
    const apply = tools.find((tool) => tool.name === "apply");
    const properties = (apply?.inputSchema.properties ?? {}) as Record<
      string,
      { properties?: Record<string, { type?: string }> }
    >;
    const input = properties.input;
    expect(input?.properties?.stdin?.type).toBe("string");
    expect(apply?.description).toContain("input.stdin");
  });
});

describe("MCP start-up and HTTP", () => {
  it("refuses to start when a capability has no implementation", async () => {
    const broken = join(root, "broken");
    await cp(join(root, "wiki"), broken, { recursive: true });
    await writeFile(
      join(broken, "web-frontend", "capabilities.json"),
      JSON.stringify({
        format: 1,
        domain: "web-frontend",
        capabilities: [{ name: "render", description: "x", implementation: "builtin:render-page" }],
      }),
    );
    const result = await runProcess(process.execPath, serveMcp(broken), {
      timeoutMs: 30_000,
    });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("capabilities.json");
    expect(result.stderr).toContain('"builtin:render-page", which nothing implements');
  });

  it("serves streamable HTTP on loopback only with the bearer token", async () => {
    const state = await openWikiServer(join(root, "wiki"), {
      runner: new UnavailableRunner("not needed"),
    });
    const server = await serveWikiHttp(state);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const denied = await fetch(server.url, {
        method: "POST",
        body: "{}",
        headers: { "content-type": "application/json" },
      });
      expect(denied.status).toBe(401);
      const httpClient = new Client({ name: "wiki-http-test", version: "1.0.0" });
      await httpClient.connect(
        new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: { authorization: `Bearer ${server.token}` } },
        }),
      );
      const result = (await httpClient.callTool({
        name: "search",
        arguments: { query: "csv rows" },
      })) as ToolResult;
      expect(
        (result.structuredContent?.shortlist as { card: { skill_name: string } }[] | undefined)?.[0]
          ?.card.skill_name,
      ).toBe("Parse CSV rows");
      await httpClient.close();
    } finally {
      await server.close();
    }
  });
});
