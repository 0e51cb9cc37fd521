/**
 * `wiki build` end to end: resources written by the test, the scripted model server playing the
 * distiller over real HTTP, real tree-sitter, readability, ffmpeg and the bubblewrap sandbox.
 * Each gate rejects (or merges, or marks) a crafted bad candidate.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BubblewrapSandbox } from "../src/env/sandbox/index.js";
import { ModelClient } from "../src/model/client.js";
import type { Script } from "../src/model/scripted/script.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { installSkill, validateSkillFolder } from "../src/skill/index.js";
import { type BuildSummary, buildWiki } from "../src/wiki/build.js";
import { exportEntry } from "../src/wiki/export.js";
import { SandboxCodeRunner, UnavailableRunner } from "../src/wiki/gates.js";
import { skillId, skillMetaSchema } from "../src/wiki/meta.js";
import {
  acquireBuildLock,
  listEntries,
  readResourceManifest,
  readTaxonomy,
} from "../src/wiki/store.js";
import { answer, hasFfmpeg, skill, writeResources } from "./support/wiki.js";

const GOOD_PY =
  'import sys\nimport re\ntext = sys.stdin.read()\nprint("-".join(re.findall(r"[a-z0-9]+", text.lower())))\n';
const BAD_PY = "import sys\nsys.exit(3)\n";

function distillerScript(): Script {
  const repo = { source_path: "textkit", node_index: 0 };
  return {
    rules: [
      {
        match: { lastUserMessage: "Resource path: textkit" },
        reply: answer([
          skill({
            skill_name: "Slugify titles",
            provenance: repo,
            code_body: GOOD_PY,
            code_language: "python",
            sample_input: "Hello World",
          }),
          // Executability gate: the code fails → kept as reference-only.
          skill({
            skill_name: "Count things",
            provenance: { source_path: "textkit", node_index: 1 },
            code_body: BAD_PY,
            code_language: "py",
            tags: ["counter"],
          }),
          // Deduplication gate: same normalised name from the same source → merged.
          skill({
            skill_name: "slugify  TITLES!",
            provenance: { source_path: "textkit", node_index: 2 },
            tags: ["permalink"],
          }),
          // Provenance gate: a source that is not in the manifest.
          skill({
            skill_name: "Invented skill",
            provenance: { source_path: "elsewhere/repo", node_index: 0 },
          }),
          // Provenance gate: a unit the resource does not have.
          skill({
            skill_name: "Out of range",
            provenance: { source_path: "textkit", node_index: 99 },
          }),
        ]),
      },
      {
        match: { lastUserMessage: "Resource path: grid-centering.html" },
        reply: answer([
          skill({
            skill_name: "Center with CSS grid",
            category_path: ["Layout", "Grid"],
            applicability: "When a single child must be centered in both axes.",
            tags: ["CSS", "grid", "center", "css"],
            text_body:
              "Make the parent a grid container and set place-items to center. The child is then centered horizontally and vertically whatever its size. No wrapper elements are needed.",
            provenance: { source_path: "grid-centering.html", node_index: 1 },
            code_body: "#!/bin/sh\nprintf '.parent { display: grid; place-items: center; }\\n'\n",
            code_language: "sh",
          }),
          // Completeness gate: text body too short.
          skill({
            skill_name: "Too short",
            text_body: "Use grid.",
            provenance: { source_path: "grid-centering.html", node_index: 0 },
          }),
        ]),
      },
      {
        match: { lastUserMessage: "Resource path: contrast.mp4" },
        reply: answer([
          skill({
            skill_name: "Check colour contrast",
            category_path: ["accessibility"],
            applicability: "When choosing text and background colours.",
            tags: ["contrast", "accessibility", "colour"],
            text_body:
              "Open the colour picker and compare the text colour with its background. Keep a contrast ratio of at least 4.5 to 1 for body text. Raise it further for thin fonts.",
            provenance: { source_path: "contrast.mp4", node_index: 1 },
            visual_caption: "The colour picker with the ratio shown.",
            visual_refs: [0, 1],
          }),
          // Modality consistency gate: a declared visual that resolves to no image.
          skill({
            skill_name: "Ghost frame",
            provenance: { source_path: "contrast.mp4", node_index: 0 },
            visual_caption: "A frame that does not exist.",
            visual_refs: [42],
          }),
        ]),
      },
      {
        match: { lastUserMessage: "Resource path: palette.png" },
        reply: answer([
          skill({
            skill_name: "Dark header palette",
            category_path: ["styling", "color"],
            applicability: "When a page header needs a dark, calm background.",
            tags: ["palette", "navy", "header"],
            text_body:
              "Use a deep navy as the header background and white text on it. The navy keeps the header calm and the white text keeps the contrast high. Reuse the same navy for links.",
            provenance: { source_path: "palette.png", node_index: 0 },
            visual_caption: "The navy swatch.",
            visual_refs: [0],
          }),
        ]),
      },
    ],
    fallback: answer([]),
  };
}

let server: ScriptedServer;
let root: string;
let resources: string;
let wiki: string;
let summary: BuildSummary;
let model: ModelClient;
const progress: string[] = [];
const hasBwrap = existsSync("/usr/bin/bwrap");

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-build-"));
  resources = join(root, "resources");
  wiki = join(root, "wiki");
  await writeResources(resources);
  server = await startScriptedServer({ script: distillerScript() });
  model = new ModelClient({
    spec: "anthropic:claude-haiku-4-5",
    env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url },
    cwd: root,
  });
  const runner = hasBwrap
    ? new SandboxCodeRunner(new BubblewrapSandbox())
    : new UnavailableRunner("bwrap not installed");
  summary = await buildWiki({
    wiki,
    domain: "web-frontend",
    resources,
    model,
    runner,
    onProgress: (line) => progress.push(line),
  });
});

afterAll(async () => {
  await server?.close();
  await rm(root, { recursive: true, force: true });
});

describe.skipIf(!hasFfmpeg)("wiki build (needs ffmpeg)", () => {
  it("makes one model call per resource and sends video frames and the image as images", () => {
    const calls = server.requests.filter((request) => request.api === "anthropic");
    expect(calls).toHaveLength(4);
    const imageBlocks = (body: unknown) => JSON.stringify(body).split('"type":"image"').length - 1;
    const video = calls.find((request) =>
      request.lastUserMessage.includes("Resource path: contrast.mp4"),
    );
    // 3 s of video at one frame per 2 s window → ceil(3 / 2) = 2 frames.
    expect(imageBlocks(video?.body)).toBe(2);
    expect(video?.lastUserMessage).toContain("Open the colour picker");
    const image = calls.find((request) =>
      request.lastUserMessage.includes("Resource path: palette.png"),
    );
    expect(imageBlocks(image?.body)).toBe(1);
    const repo = calls.find((request) =>
      request.lastUserMessage.includes("Resource path: textkit"),
    );
    expect(repo?.lastUserMessage).toContain("textkit/slug.py:5-8 function_definition slugify");
    expect(repo?.lastUserMessage).toContain("textkit/slug.py:11-13 class_definition Counter");
    expect(repo?.lastUserMessage).toContain("Small text helpers");
  });

  it("reports every outcome and the gate that rejected each bad candidate", () => {
    const byName = new Map(summary.reports.map((report) => [report.skill_name, report]));
    expect(byName.get("Too short")?.rejected_by).toBe("completeness");
    expect(byName.get("Invented skill")?.rejected_by).toBe("provenance");
    expect(byName.get("Out of range")?.rejected_by).toBe("provenance");
    expect(byName.get("Ghost frame")?.rejected_by).toBe("modality");
    expect(byName.get("slugify TITLES!")?.outcome).toBe("merged");
    expect(byName.get("slugify TITLES!")?.merged_into).toBe(skillId("web-frontend", "textkit", 0));
    expect(summary.rejected).toEqual({ completeness: 1, provenance: 2, modality: 1 });
    expect(summary.merged).toBe(1);
    expect(summary.candidates).toBe(10);
    for (const report of summary.reports)
      expect(report.gates.map((gate) => gate.gate)).toEqual([
        "completeness",
        "provenance",
        "deduplication",
        "modality",
        "content",
        "executability",
      ]);
    if (hasBwrap) {
      expect(byName.get("Count things")?.outcome).toBe("reference-only");
      expect(byName.get("Count things")?.exec_ok).toBe(false);
      expect(byName.get("Slugify titles")?.exec_ok).toBe(true);
      expect(summary.accepted).toBe(4);
      expect(summary.reference_only).toBe(1);
    }
    // "Check colour contrast" and "Dark header palette" carry no code.
    expect(summary.accepted_text_only).toBe(2);
    expect(byName.get("Dark header palette")?.exec_ok).toBe("not-applicable");
    expect(progress.some((line) => line.includes("distilling contrast.mp4"))).toBe(true);
  });

  it("flags resources with a restrictive or unknown licence in the manifest", async () => {
    const manifest = await readResourceManifest(wiki, "web-frontend");
    const byPath = new Map(manifest?.resources.map((record) => [record.path, record]));
    expect(byPath.get("textkit")).toMatchObject({
      type: "repository",
      licence: "MIT",
      licence_flag: "permissive",
    });
    expect(byPath.get("grid-centering.html")).toMatchObject({
      type: "article",
      licence: "CC-BY-4.0",
      licence_flag: "permissive",
    });
    expect(byPath.get("contrast.mp4")).toMatchObject({
      type: "video",
      licence: "CC-BY-NC-4.0",
      licence_flag: "restrictive",
      companions: ["contrast.srt"],
    });
    expect(byPath.get("palette.png")).toMatchObject({
      type: "image",
      licence: null,
      licence_flag: "unknown",
    });
    const { createHash } = await import("node:crypto");
    const html = await readFile(join(resources, "grid-centering.html"));
    expect(byPath.get("grid-centering.html")?.sha256).toBe(
      createHash("sha256").update(html).digest("hex"),
    );
    expect(summary.flagged_licences.map((flagged) => flagged.path).sort()).toEqual([
      "contrast.mp4",
      "palette.png",
    ]);
  });

  it("writes complete, schema-valid entries with their modalities, and a taxonomy", async () => {
    const entries = await listEntries(wiki, "web-frontend");
    expect(entries.map((entry) => entry.meta.skill_name).sort()).toEqual([
      "Center with CSS grid",
      "Check colour contrast",
      "Count things",
      "Dark header palette",
      "Slugify titles",
    ]);
    for (const entry of entries) {
      expect(
        skillMetaSchema.safeParse(JSON.parse(await readFile(join(entry.dir, "meta.json"), "utf8")))
          .success,
      ).toBe(true);
      for (const folder of ["source", "text", "visual", "code"])
        expect(existsSync(join(entry.dir, folder))).toBe(true);
    }
    const grid = entries.find((entry) => entry.meta.skill_name === "Center with CSS grid");
    expect(grid?.meta.category_path).toEqual(["layout", "grid"]);
    expect(grid?.meta.tags).toEqual(["css", "grid", "center"]);
    expect(grid?.meta.code_language).toBe("bash");
    expect(grid?.meta.skill_id).toBe(skillId("web-frontend", "grid-centering.html", 1));
    const contrast = entries.find((entry) => entry.meta.skill_name === "Check colour contrast");
    expect(contrast?.meta.modalities_present).toEqual(["text", "visual"]);
    expect(contrast?.meta.files.visual).toEqual(["visual/frame-000.png", "visual/frame-001.png"]);
    // Text only: verified by the text gates, and said to be never executed.
    expect(contrast?.meta.exec_ok).toBe("not-applicable");
    expect(contrast?.meta.validation_status).toBe("verified");
    expect(contrast?.meta.validation_note).toContain("nothing executed");
    const slug = entries.find((entry) => entry.meta.skill_name === "Slugify titles");
    expect(slug?.meta.merged).toEqual([skillId("web-frontend", "textkit", 2)]);
    // The duplicate's tags are recorded with the merge, not added to the survivor's.
    expect(slug?.meta.tags).toEqual(["slug", "url"]);
    expect(slug?.meta.merges.map((merge) => [merge.skill_id, merge.tags])).toEqual([
      [skillId("web-frontend", "textkit", 2), ["permalink"]],
    ]);
    const overview = await readFile(join(slug?.dir ?? "", "text/overview.md"), "utf8");
    expect(overview).toContain("## When to use");
    const taxonomy = await readTaxonomy(wiki, "web-frontend");
    expect(taxonomy.categories.map((node) => node.name)).toEqual([
      "accessibility",
      "layout",
      "styling",
      "text",
    ]);
    expect(taxonomy.categories.find((node) => node.name === "layout")?.children[0]?.skills).toEqual(
      [grid?.meta.skill_id],
    );
    // No staging folder is left behind.
    expect(
      (await readdir(join(wiki, "web-frontend"))).filter((name) => name.startsWith(".")),
    ).toEqual([]);
  });

  it("exports an entry as an Agent Skills folder that validates and installs", async () => {
    const entries = await listEntries(wiki, "web-frontend");
    const slug = entries.find((entry) => entry.meta.skill_name === "Slugify titles");
    if (slug === undefined) throw new Error("missing entry");
    const out = join(root, "exported");
    const exported = await exportEntry(slug, out);
    expect(exported.name).toBe("slugify-titles");
    expect((await validateSkillFolder(exported.dir)).valid).toBe(true);
    expect(await readFile(join(exported.dir, "scripts/main.py"), "utf8")).toBe(GOOD_PY);
    const workspace = join(root, "workspace");
    await mkdir(workspace);
    const installed = await installSkill(exported.dir, { agent: "claude-code", workspace });
    expect(installed.destination).toBe(join(workspace, ".claude", "skills", "slugify-titles"));
    expect(existsSync(join(installed.destination, "SKILL.md"))).toBe(true);
    const contrast = entries.find((entry) => entry.meta.skill_name === "Check colour contrast");
    if (contrast === undefined) throw new Error("missing entry");
    const visual = await exportEntry(contrast, out);
    expect((await validateSkillFolder(visual.dir)).valid).toBe(true);
    expect(existsSync(join(visual.dir, "assets/frame-001.png"))).toBe(true);
  });

  it("building again merges every candidate instead of adding duplicates", async () => {
    const before = (await listEntries(wiki, "web-frontend")).length;
    const again = await buildWiki({
      wiki,
      domain: "web-frontend",
      resources,
      model,
      runner: new UnavailableRunner("not needed"),
    });
    expect(again.accepted + again.reference_only + again.unverified).toBe(0);
    expect(again.merged).toBe(6);
    expect((await listEntries(wiki, "web-frontend")).length).toBe(before);
  });
});

describe("build lock and atomic entries", () => {
  it("refuses a second builder while the lock is held", async () => {
    const directory = await mkdtemp(join(tmpdir(), "skillsmith-wiki-lock-"));
    try {
      const lock = await acquireBuildLock(directory);
      const failure = await acquireBuildLock(directory).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect((failure as { code?: string }).code).toBe("wiki.locked");
      await lock.release();
      const again = await acquireBuildLock(directory);
      await again.release();
      // A lock left by a process that no longer exists is taken over.
      await writeFile(join(directory, ".build.lock"), JSON.stringify({ pid: 2 ** 22 + 12345 }));
      const stale = await acquireBuildLock(directory);
      await stale.release();
      expect(existsSync(join(directory, ".build.lock"))).toBe(false);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("never shows a half-written entry: staging folders are invisible to readers", async () => {
    const directory = await mkdtemp(join(tmpdir(), "skillsmith-wiki-crash-"));
    try {
      // What a crash mid-write leaves: a staging folder with a partial entry.
      const partial = join(directory, "demo", `.staging-${"a".repeat(40)}-dead`);
      await mkdir(join(partial, "text"), { recursive: true });
      await writeFile(join(partial, "text", "overview.md"), "# half");
      expect(await listEntries(directory, "demo")).toEqual([]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
