/**
 * Shared fixtures of the wiki tests: resources written by the tests themselves (a small git
 * repository, an HTML article, a short video generated with ffmpeg plus subtitles, an image)
 * and distiller answers for the scripted model server.
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { runProcess } from "../../src/core/process.js";
import type { DistilledSkill } from "../../src/wiki/distill.js";
import { type SkillMeta, skillId, WIKI_ENTRY_FORMAT } from "../../src/wiki/meta.js";
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

async function ffmpeg(args: string[]): Promise<void> {
  const result = await runProcess("ffmpeg", ["-nostdin", "-v", "error", "-y", ...args]);
  if (result.exitCode !== 0) throw new Error(`ffmpeg ${args.join(" ")}: ${result.stderr}`);
}

/**
 * A video of solid-colour scenes (160×120, 10 fps), cut at the running sums of the scenes'
 * lengths, with `subtitles` (SubRip text) as a mov_text track inside the file when given.
 */
export async function writeSceneVideo(
  file: string,
  scenes: readonly { colour: string; seconds: number }[],
  subtitles?: string,
): Promise<void> {
  const plain = subtitles === undefined ? file : `${file}.plain.mp4`;
  await ffmpeg([
    ...scenes.flatMap((scene) => [
      "-f",
      "lavfi",
      "-i",
      `color=c=${scene.colour}:s=160x120:d=${scene.seconds}:r=10`,
    ]),
    "-filter_complex",
    `${scenes.map((_, index) => `[${index}]`).join("")}concat=n=${scenes.length}:v=1:a=0,format=yuv420p`,
    plain,
  ]);
  if (subtitles === undefined) return;
  const srt = `${file}.subtitles.srt`;
  await writeFile(srt, subtitles);
  await ffmpeg([
    "-i",
    plain,
    "-i",
    srt,
    "-map",
    "0:v",
    "-map",
    "1:s",
    "-c:v",
    "copy",
    "-c:s",
    "mov_text",
    "-metadata:s:s:0",
    "language=eng",
    file,
  ]);
  await rm(plain, { force: true });
  await rm(srt, { force: true });
}

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
        format: WIKI_ENTRY_FORMAT,
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
        merges: [],
        findings: [],
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

/** A route of the resource server: a fixed answer, or a handler for special behaviour. */
export type ResourceRoute =
  | { readonly body: string | Uint8Array; readonly contentType: string; readonly status?: number }
  | { readonly handler: (request: IncomingMessage, response: ServerResponse) => void };

export interface ResourceServer {
  readonly url: string;
  /** Every request path, in order, so tests can count fetches. */
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 standing in for the web: fixed routes, 404 for anything else,
 * and git repositories under `/git/` through `git http-backend` (smart HTTP) plus any static
 * files under `/static/` (for git's dumb HTTP protocol).
 */
export async function startResourceServer(options: {
  routes: Record<string, ResourceRoute>;
  /** `GIT_PROJECT_ROOT` of `git http-backend`: bare repositories served under `/git/`. */
  gitRoot?: string;
  /** Files served as they are under `/static/`. */
  staticRoot?: string;
}): Promise<ResourceServer> {
  const requests: string[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    requests.push(url.pathname);
    const route = options.routes[url.pathname];
    if (route !== undefined) {
      if ("handler" in route) return route.handler(request, response);
      response.writeHead(route.status ?? 200, { "content-type": route.contentType });
      response.end(route.body);
      return;
    }
    if (options.gitRoot !== undefined && url.pathname.startsWith("/git/"))
      return gitHttpBackend(options.gitRoot, url, request, response);
    if (options.staticRoot !== undefined && url.pathname.startsWith("/static/")) {
      const file = join(options.staticRoot, decodeURIComponent(url.pathname.slice(8)));
      readFile(file).then(
        (data) => {
          response.writeHead(200, { "content-type": "application/octet-stream" });
          response.end(data);
        },
        () => {
          response.writeHead(404, { "content-type": "text/plain" });
          response.end("not found\n");
        },
      );
      return;
    }
    response.writeHead(404, { "content-type": "text/plain" });
    response.end("not found\n");
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((done) => {
        // Stalled routes keep their sockets open; end them so close() returns.
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}

/**
 * Bridge one request to `git http-backend` (CGI). spawn is used directly, not runProcess,
 * because pack data is binary on both stdin and stdout and runProcess speaks text.
 */
function gitHttpBackend(
  root: string,
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const child = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: "1",
      PATH_INFO: url.pathname.slice(4),
      QUERY_STRING: url.search.replace(/^\?/, ""),
      REQUEST_METHOD: request.method ?? "GET",
      CONTENT_TYPE: request.headers["content-type"] ?? "",
      REMOTE_ADDR: "127.0.0.1",
      ...(request.headers["content-encoding"] === undefined
        ? {}
        : { HTTP_CONTENT_ENCODING: String(request.headers["content-encoding"]) }),
      ...(request.headers["git-protocol"] === undefined
        ? {}
        : { GIT_PROTOCOL: String(request.headers["git-protocol"]) }),
    },
    stdio: ["pipe", "pipe", "ignore"],
  });
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.pipe(child.stdin);
  child.on("close", () => {
    const output = Buffer.concat(chunks);
    const end = output.indexOf("\r\n\r\n");
    const split = end >= 0 ? end : output.indexOf("\n\n");
    const headerText = output.subarray(0, split).toString("latin1");
    const body = output.subarray(split + (end >= 0 ? 4 : 2));
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of headerText.split(/\r?\n/)) {
      const colon = line.indexOf(":");
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
      else headers[name] = value;
    }
    response.writeHead(status, headers);
    response.end(body);
  });
}

/** Commit `files` into a new repository at `dir` and make a bare copy at `bare` for serving. */
export async function makeServedRepository(
  dir: string,
  bare: string,
  files: Record<string, string>,
): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@e",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@e",
  };
  const git = async (args: string[], cwd = dir) => {
    const result = await runProcess("git", args, { cwd, env });
    if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
    return result.stdout.trim();
  };
  await git(["init", "-q", "-b", "main"]);
  await git(["add", "."]);
  await git(["commit", "-q", "-m", "init"]);
  await git(["clone", "-q", "--bare", dir, bare], dirname(bare));
  await git(["update-server-info"], bare);
  return git(["rev-parse", "HEAD"]);
}
