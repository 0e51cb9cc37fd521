/**
 * A wiki built from real public material: pypa/packaging at the commit SWE-Skills-Bench pins
 * (the git bundle in ../shared/fixtures/repos), a page of the libffi manual as Debian ships it
 * (test/fixtures/articles, MIT), and a video ffmpeg generates here with scene cuts and a
 * subtitle track inside it. The distiller is scripted; the connectors, manifest, gates and
 * deduplication are checked on what they produce, against counts worked out independently
 * (Python's own `ast` for the code regions, the page's markup by hand, the cuts the test made).
 */
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../src/core/paths.js";
import { runProcess } from "../src/core/process.js";
import { BubblewrapSandbox } from "../src/env/sandbox/index.js";
import { ModelClient } from "../src/model/client.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { type BuildSummary, buildWiki } from "../src/wiki/build.js";
import { type CodeRunner, SandboxCodeRunner, UnavailableRunner } from "../src/wiki/gates.js";
import { skillId } from "../src/wiki/meta.js";
import { listEntries, readResourceManifest } from "../src/wiki/store.js";
import { answer, hasFfmpeg, hasGit, skill, writeSceneVideo } from "./support/wiki.js";

const BUNDLE = resolve(packageRoot(), "..", "shared", "fixtures", "repos", "pypa-packaging.bundle");
const PINNED = "5d3ab595f9e1d564e7c48a2253c96ac38444ae63";
const ARTICLE = join(packageRoot(), "test", "fixtures", "articles", "libffi-the-basics.html");
const PYTHON = "/usr/bin/python3";
const ready = existsSync(BUNDLE) && hasGit && hasFfmpeg && existsSync(PYTHON);
const hasBwrap = existsSync("/usr/bin/bwrap");

/**
 * Top-level definitions of every .py file as Python's own parser sees them, with the
 * repository connector's walk (sorted paths; .git, node_modules, __pycache__, .venv, dist,
 * build and target skipped; files over 512 KiB skipped).
 */
const ORACLE = `
import ast, json, os, sys
root = sys.argv[1]
skip = {".git", "node_modules", "__pycache__", ".venv", "dist", "build", "target"}
files = []
for directory, folders, names in os.walk(root):
    folders[:] = [folder for folder in folders if folder not in skip]
    files += [os.path.relpath(os.path.join(directory, name), root) for name in names]
regions = []
for path in sorted(files):
    if not path.endswith(".py") or os.path.getsize(os.path.join(root, path)) > 512 * 1024:
        continue
    for node in ast.parse(open(os.path.join(root, path), encoding="utf8").read()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            kind = "class_definition" if isinstance(node, ast.ClassDef) else "function_definition"
            if node.decorator_list: kind = "decorated_definition"
            regions.append([path, first, node.end_lineno, kind, node.name])
print(json.dumps(regions))
`;

const SUBTITLES = `1
00:00:00,300 --> 00:00:01,700
Start from the build backend table.

2
00:00:02,400 --> 00:00:04,500
Then pin the version in pyproject.toml.
`;

let root: string;
let resources: string;
let server: ScriptedServer;
let runner: CodeRunner;
/** [path, first line, last line, node type, name] per region, from Python's ast. */
let regions: [string, number, number, string, string][];
const progress: string[] = [];

function regionIndex(path: string, name: string): number {
  const index = regions.findIndex((region) => region[0] === path && region[4] === name);
  if (index < 0) throw new Error(`no region ${name} in ${path}`);
  return index;
}

const CANONICALIZE = `import re
import sys

name = sys.stdin.read().strip()
print(re.sub(r"[-_.]+", "-", name).lower())
`;

beforeAll(async () => {
  if (!ready) return;
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-real-"));
  resources = join(root, "resources");
  await mkdir(resources);
  const clone = await runProcess("git", ["clone", "-q", BUNDLE, join(resources, "pypa-packaging")]);
  if (clone.exitCode !== 0) throw new Error(clone.stderr);
  await copyFile(ARTICLE, join(resources, "libffi-the-basics.html"));
  await writeSceneVideo(
    join(resources, "pinning.mp4"),
    [
      { colour: "navy", seconds: 2.5 },
      { colour: "orange", seconds: 2.5 },
      { colour: "white", seconds: 2 },
    ],
    SUBTITLES,
  );
  const oracle = await runProcess(PYTHON, ["-c", ORACLE, join(resources, "pypa-packaging")]);
  if (oracle.exitCode !== 0) throw new Error(oracle.stderr);
  regions = JSON.parse(oracle.stdout) as typeof regions;
  const canonicalize = regionIndex("src/packaging/utils.py", "canonicalize_name");
  const version = regionIndex("src/packaging/version.py", "Version");
  server = await startScriptedServer({
    script: {
      rules: [
        {
          match: { lastUserMessage: "Resource path: pypa-packaging\n" },
          reply: answer([
            skill({
              skill_name: "Normalise a Python package name",
              category_path: ["packaging", "names"],
              tags: ["pep 503", "normalise", "package name"],
              applicability: "When two spellings of a distribution name must compare equal.",
              provenance: { source_path: "pypa-packaging", node_index: canonicalize },
              code_body: CANONICALIZE,
              code_language: "python",
              sample_input: "Foo.Bar__baz",
            }),
            skill({
              skill_name: "Compare version numbers",
              category_path: ["packaging", "versions"],
              tags: ["pep 440", "version"],
              applicability: "When release versions must be ordered as pip orders them.",
              provenance: { source_path: "pypa-packaging", node_index: version },
            }),
            // The same skill again from the same source under another node: merged, not added.
            skill({
              skill_name: "normalise a python package NAME",
              category_path: ["packaging"],
              tags: ["canonical"],
              applicability: "When names must be canonical.",
              provenance: { source_path: "pypa-packaging", node_index: canonicalize + 1 },
            }),
          ]),
        },
        {
          match: { lastUserMessage: "Resource path: libffi-the-basics.html" },
          reply: answer([
            skill({
              skill_name: "Prepare a call interface with ffi_prep_cif",
              category_path: ["ffi"],
              tags: ["libffi", "ffi_prep_cif", "cif"],
              applicability:
                "When a C function must be called with a signature known only at run time.",
              // Paragraph 2 is the first <dt>, ffi_prep_cif's signature (counted by hand below).
              provenance: { source_path: "libffi-the-basics.html", node_index: 2 },
            }),
          ]),
        },
        {
          match: { lastUserMessage: "Resource path: pinning.mp4" },
          reply: answer([
            skill({
              skill_name: "Pin the version in pyproject.toml",
              category_path: ["packaging", "versions"],
              tags: ["pyproject", "version"],
              applicability: "When a project's version must be declared in one place.",
              provenance: { source_path: "pinning.mp4", node_index: 1 },
              visual_caption: "The orange scene where the version is pinned.",
              visual_refs: [1],
            }),
          ]),
        },
      ],
      fallback: answer([]),
    },
  });
  runner = hasBwrap
    ? new SandboxCodeRunner(new BubblewrapSandbox())
    : new UnavailableRunner("bubblewrap not installed");
}, 120_000);
afterAll(async () => {
  await server?.close();
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

async function build(wiki: string): Promise<BuildSummary> {
  return buildWiki({
    wiki,
    domain: "python-packaging",
    resources,
    model: new ModelClient({
      spec: "anthropic:claude-haiku-4-5",
      env: { ANTHROPIC_API_KEY: "t", ANTHROPIC_BASE_URL: server.url },
      cwd: root,
    }),
    runner,
    onProgress: (line) => progress.push(line),
  });
}

describe.skipIf(!ready)(
  "a wiki from real material (needs ../shared/fixtures/repos/pypa-packaging.bundle, git, ffmpeg, /usr/bin/python3)",
  () => {
    it("cuts each resource into the units its connector promises and records them in the manifest", async () => {
      const summary = await build(join(root, "wiki-a"));
      // Code regions: tree-sitter's count equals Python's own parser's (the two build.sh files
      // hold no function and are recorded as unparsed: the bash grammar throws on case … esac).
      expect(progress).toContain(`  prepared repository pypa-packaging: ${regions.length} units`);
      expect(regions.length).toBeGreaterThan(300);
      // Paragraphs, counted by hand in the page: 22 <p> in the section body (the two "Next:"
      // navigation <p> are outside the readable content) and 3 <dt> function signatures; the
      // <h3> "2.1 The Basics" is shorter than the 20-character minimum.
      expect(progress).toContain("  prepared article libffi-the-basics.html: 25 units");
      // Frames: the three scenes the test cut at 2.5 s and 5 s.
      expect(progress).toContain("  prepared video pinning.mp4: 3 units  [licence unknown]");

      const manifest = await readResourceManifest(join(root, "wiki-a"), "python-packaging");
      const byPath = new Map(manifest?.resources.map((record) => [record.path, record]));
      expect(byPath.get("pypa-packaging")).toMatchObject({
        type: "repository",
        licence: "Apache-2.0 OR BSD-2-Clause",
        licence_flag: "permissive",
        unparsed: ["tests/manylinux/build.sh", "tests/musllinux/build.sh"],
      });
      expect(byPath.get("libffi-the-basics.html")).toMatchObject({
        type: "article",
        licence: "MIT",
        licence_flag: "permissive",
        sha256: "e52e0840c0815deed45a4d86ee46245353e468ba1af7027758be91ac6d0d2ca5",
      });
      expect(byPath.get("pinning.mp4")).toMatchObject({
        type: "video",
        key_frames: { method: "scene", times_seconds: [0, 2.5, 5] },
        transcript: { source: "embedded", from: "0:s:0", codec: "mov_text", cues: 2 },
      });

      // Gates: four accepted (the code ran in the sandbox when it is there), one merged.
      expect(summary.reports.map((report) => [report.skill_name, report.outcome])).toEqual([
        ["Prepare a call interface with ffi_prep_cif", "accepted"],
        ["Pin the version in pyproject.toml", "accepted"],
        ["Normalise a Python package name", hasBwrap ? "accepted" : "unverified"],
        ["Compare version numbers", "accepted"],
        ["normalise a python package NAME", "merged"],
      ]);
      const entries = await listEntries(join(root, "wiki-a"), "python-packaging");
      expect(entries).toHaveLength(4);
      const byName = new Map(entries.map((entry) => [entry.meta.skill_name, entry.meta]));
      const canonicalize = regions[regionIndex("src/packaging/utils.py", "canonicalize_name")];
      expect(byName.get("Normalise a Python package name")?.provenance[0]?.locator).toBe(
        `src/packaging/utils.py:${canonicalize?.[1]}-${canonicalize?.[2]} function_definition canonicalize_name`,
      );
      expect(byName.get("Normalise a Python package name")?.merged).toEqual([
        skillId(
          "python-packaging",
          "pypa-packaging",
          regionIndex("src/packaging/utils.py", "canonicalize_name") + 1,
        ),
      ]);
      // The page's headings above the <dt> follow the paragraph number.
      expect(
        byName.get("Prepare a call interface with ffi_prep_cif")?.provenance[0]?.locator,
      ).toMatch(/^paragraph 2(?: § .+)?$/);
      expect(byName.get("Pin the version in pyproject.toml")?.files.visual).toEqual([
        "visual/frame-001.png",
      ]);
      expect(byName.get("Pin the version in pyproject.toml")?.provenance[0]?.locator).toMatch(
        /^frame at 00:00:02 \(scene change, score [01]\.\d{3}\)$/,
      );
      // The commit is the one SWE-Skills-Bench pins: the bundle's HEAD.
      const head = await runProcess("git", ["rev-parse", "HEAD"], {
        cwd: join(resources, "pypa-packaging"),
      });
      expect(head.stdout.trim()).toBe(PINNED);
    });

    it("gives the same ids in a second wiki and merges, not adds, when built again", async () => {
      const first = (await listEntries(join(root, "wiki-a"), "python-packaging")).map(
        (entry) => entry.meta.skill_id,
      );
      const again = await build(join(root, "wiki-a"));
      expect(again.reports.map((report) => report.outcome)).toEqual([
        "merged",
        "merged",
        "merged",
        "merged",
        "merged",
      ]);
      expect(
        (await listEntries(join(root, "wiki-a"), "python-packaging")).map(
          (entry) => entry.meta.skill_id,
        ),
      ).toEqual(first);
      await build(join(root, "wiki-b"));
      expect(
        (await listEntries(join(root, "wiki-b"), "python-packaging")).map(
          (entry) => entry.meta.skill_id,
        ),
      ).toEqual(first);
      // Each id is the protocol's SHA-1 of (domain, source path, unit index), recomputed here.
      expect([...first].sort()).toEqual(
        [
          skillId("python-packaging", "libffi-the-basics.html", 2),
          skillId("python-packaging", "pinning.mp4", 1),
          skillId(
            "python-packaging",
            "pypa-packaging",
            regionIndex("src/packaging/utils.py", "canonicalize_name"),
          ),
          skillId(
            "python-packaging",
            "pypa-packaging",
            regionIndex("src/packaging/version.py", "Version"),
          ),
        ].sort(),
      );
    });
  },
);
