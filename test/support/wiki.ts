/**
 * Shared fixtures of the wiki tests: resources written by the tests themselves (a small git
 * repository, an HTML article, a short video generated with ffmpeg plus subtitles, an image)
 * and distiller answers for the scripted model server.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runProcess } from "../../src/core/process.js";
import type { DistilledSkill } from "../../src/wiki/distill.js";
import { type SkillMeta, skillId } from "../../src/wiki/meta.js";
import {
  jsonText,
  loadOrCreateWikiManifest,
  writeEntry,
  writeTaxonomy,
} from "../../src/wiki/store.js";

export const hasFfmpeg = (await runProcess("ffmpeg", ["-version"])).exitCode === 0;
export const hasGit = (await runProcess("git", ["--version"])).exitCode === 0;

export const SLUGIFY_PY = `import re
import sys


def slugify(text):
    """Lowercase words joined by hyphens."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)


class Counter:
    def __init__(self):
        self.count = 0


def words(text):
    return re.findall(r"[a-z0-9]+", text.lower())
`;

export const ARTICLE_HTML = `<!doctype html>
<html><head><title>Centering with CSS grid</title>
<meta name="license" content="CC-BY-4.0"></head>
<body><nav>Home | Blog</nav>
<article>
<h1>Centering with CSS grid</h1>
<p>Centering a box both horizontally and vertically used to take several tricks. With CSS grid, one declaration on the parent does it.</p>
<p>Set display to grid and place-items to center on the container. The single child is then centered in both axes, whatever its size.</p>
<pre>.parent { display: grid; place-items: center; }</pre>
<p>This works for any element and keeps the markup free of wrapper elements, which makes it the first thing to try.</p>
</article>
<footer>Copyright the author</footer>
</body></html>
`;

export const SUBTITLES_SRT = `1
00:00:00,000 --> 00:00:01,500
Open the colour picker on the toolbar.

2
00:00:01,500 --> 00:00:03,000
Pick a contrast ratio of at least four and a half to one.
`;

/** Write the four resources into `root` and return their manifest paths. */
export async function writeResources(
  root: string,
): Promise<{ repo: string; article: string; video: string; image: string }> {
  await mkdir(root, { recursive: true });
  const repo = join(root, "textkit");
  await mkdir(join(repo, "textkit"), { recursive: true });
  await writeFile(
    join(repo, "README.md"),
    "# textkit\n\nSmall text helpers: slugify titles for URLs.\n",
  );
  await writeFile(
    join(repo, "LICENSE"),
    "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n",
  );
  await writeFile(join(repo, "textkit", "slug.py"), SLUGIFY_PY);
  await writeFile(join(repo, "textkit", "notes.txt"), "not code\n");
  if (hasGit) {
    const git = (args: string[]) =>
      runProcess("git", args, {
        cwd: repo,
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: "t",
          GIT_AUTHOR_EMAIL: "t@e",
          GIT_COMMITTER_NAME: "t",
          GIT_COMMITTER_EMAIL: "t@e",
        },
      });
    await git(["init", "-q"]);
    await git(["add", "."]);
    await git(["commit", "-q", "-m", "init"]);
  }
  await writeFile(join(root, "grid-centering.html"), ARTICLE_HTML);
  if (hasFfmpeg) {
    const video = await runProcess("ffmpeg", [
      "-nostdin",
      "-v",
      "error",
      "-y",
      "-f",
      "lavfi",
      "-i",
      "testsrc=duration=3:size=160x120:rate=10",
      "-pix_fmt",
      "yuv420p",
      join(root, "contrast.mp4"),
    ]);
    if (video.exitCode !== 0) throw new Error(video.stderr);
    await writeFile(join(root, "contrast.srt"), SUBTITLES_SRT);
    await writeFile(join(root, "contrast.mp4.license"), "SPDX-License-Identifier: CC-BY-NC-4.0\n");
    const image = await runProcess("ffmpeg", [
      "-nostdin",
      "-v",
      "error",
      "-y",
      "-f",
      "lavfi",
      "-i",
      "color=c=navy:size=64x48",
      "-frames:v",
      "1",
      join(root, "palette.png"),
    ]);
    if (image.exitCode !== 0) throw new Error(image.stderr);
    await writeFile(
      join(root, "palette.png.txt"),
      "A navy palette swatch used for dark headers.\n",
    );
  }
  return {
    repo: "textkit",
    article: "grid-centering.html",
    video: "contrast.mp4",
    image: "palette.png",
  };
}

export function skill(
  overrides: Partial<DistilledSkill> & Pick<DistilledSkill, "skill_name" | "provenance">,
): DistilledSkill {
  return {
    category_path: ["text", "formatting"],
    applicability: "When a title must become a URL-safe identifier.",
    tags: ["slug", "url"],
    text_body:
      "Lowercase the text, find runs of letters and digits, and join them with hyphens. Everything else is dropped, so the result is safe in a URL path. Apply it once; it is idempotent.",
    inputs: "A string.",
    expected_effects: "A lowercase, hyphen-separated string.",
    code_body: null,
    code_language: null,
    sample_input: null,
    visual_caption: null,
    visual_refs: [],
    ...overrides,
  };
}

export function answer(skills: DistilledSkill[]): { text: string } {
  return { text: JSON.stringify({ skills }) };
}

/** A one-pixel PNG (black), written by hand: signature, IHDR, IDAT, IEND. */
export const TINY_PNG = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082",
  "hex",
);

interface HandSkill {
  name: string;
  domain: string;
  source: string;
  node: number;
  category: string[];
  tags: string[];
  applicability: string;
  status: SkillMeta["validation_status"];
  execOk: SkillMeta["exec_ok"];
  code?: { file: string; text: string; language: string };
  image?: boolean;
}

export const handSkills: HandSkill[] = [
  {
    name: "Center with CSS grid",
    domain: "web-frontend",
    source: "grid.html",
    node: 1,
    category: ["layout", "grid"],
    tags: ["css", "grid", "center"],
    applicability:
      "When one child element must sit in the middle of its parent, horizontally and vertically.",
    status: "verified",
    execOk: true,
    code: { file: "code/main.sh", text: "printf 'centered:%s\\n' \"$(cat)\"\n", language: "bash" },
  },
  {
    name: "Responsive flexbox navigation bar",
    domain: "web-frontend",
    source: "nav.html",
    node: 0,
    category: ["components", "navigation"],
    tags: ["flexbox", "nav", "menu", "responsive"],
    applicability: "When a site needs a top menu that wraps on small screens.",
    status: "verified",
    execOk: "unknown",
  },
  {
    name: "Check colour contrast",
    domain: "web-frontend",
    source: "contrast.mp4",
    node: 1,
    category: ["accessibility"],
    tags: ["contrast", "accessibility", "colour"],
    applicability: "When choosing text and background colours that everyone can read.",
    status: "verified",
    execOk: "unknown",
    image: true,
  },
  {
    name: "Legacy float layout",
    domain: "web-frontend",
    source: "floats.html",
    node: 0,
    category: ["layout"],
    tags: ["float", "layout", "clearfix"],
    applicability: "When a float layout must be maintained in an old page.",
    status: "reference-only",
    execOk: false,
    code: { file: "code/main.py", text: "raise SystemExit(1)\n", language: "python" },
  },
  {
    name: "Parse CSV rows",
    domain: "data",
    source: "csvkit",
    node: 2,
    category: ["parsing", "csv"],
    tags: ["csv", "python", "parsing"],
    applicability: "When a comma-separated file must be read into rows.",
    status: "verified",
    execOk: true,
    code: {
      file: "code/main.py",
      text: "import csv, sys\nprint(len(list(csv.reader(sys.stdin))))\n",
      language: "python",
    },
  },
];

export function handSkillId(each: HandSkill): string {
  return skillId(each.domain, each.source, each.node);
}

/** A small wiki written entry by entry (no model), for the search and MCP tests. */
export async function writeHandWiki(root: string): Promise<void> {
  await loadOrCreateWikiManifest(root);
  const created = "2026-01-01T00:00:00.000Z";
  for (const each of handSkills) {
    const files: Record<string, string | Uint8Array> = {
      "text/overview.md": `# ${each.name}\n\n## Mechanism\n\nHow ${each.name.toLowerCase()} works, step by step.\n`,
    };
    const visual: string[] = [];
    if (each.image === true) {
      files["visual/frame-000.png"] = TINY_PNG;
      visual.push("visual/frame-000.png");
    }
    if (each.code !== undefined) files[each.code.file] = each.code.text;
    await writeEntry(root, {
      meta: {
        format: 1,
        skill_id: handSkillId(each),
        skill_name: each.name,
        domain: each.domain,
        category_path: each.category,
        tags: each.tags,
        applicability: each.applicability,
        source: {
          type: each.source.endsWith(".mp4")
            ? "video"
            : each.source.endsWith(".html")
              ? "article"
              : "repository",
        },
        provenance: [
          {
            source_path: each.source,
            node_index: each.node,
            sha256: "0".repeat(64),
            resource_type: each.source.endsWith(".mp4")
              ? "video"
              : each.source.endsWith(".html")
                ? "article"
                : "repository",
            licence: "MIT",
            licence_flag: "permissive",
            locator: `unit ${each.node}`,
          },
        ],
        modalities_present: [
          "text",
          ...(each.image === true ? (["visual"] as const) : []),
          ...(each.code === undefined ? [] : (["code"] as const)),
        ],
        files: {
          text: ["text/overview.md"],
          visual,
          code: each.code === undefined ? [] : [each.code.file],
        },
        code_language: each.code?.language ?? null,
        exec_ok: each.execOk,
        validation_status: each.status,
        validation_note: each.status === "verified" ? null : "exit code 1",
        merged: [],
        created,
        updated: created,
      },
      files,
    });
  }
  await writeTaxonomy(root, "web-frontend");
  await writeTaxonomy(root, "data");
  await writeFile(
    join(root, "web-frontend", "capabilities.json"),
    jsonText({
      format: 1,
      domain: "web-frontend",
      capabilities: [
        {
          name: "run-code",
          description: "Run the skill's code in the sandbox on stdin",
          implementation: "builtin:run-code",
        },
        {
          name: "instructions",
          description: "The skill's overview, to follow by hand",
          implementation: "builtin:instructions",
        },
      ],
    }),
  );
}
