/**
 * Skills over MCP the standard way: the MCP Skills extension (SEP-2640,
 * `io.modelcontextprotocol/skills`). Every file of a served skill is a resource
 * `skill://<skill-path>/<file-path>` read with `resources/read`; `skills/list` and `skills/get`
 * return entries carrying the verbatim frontmatter and a complete manifest of the skill's files
 * with SHA-256 digests and sizes; `resources/directory/read` lists a directory's direct children.
 * The pinned SDK (1.32.2) knows `capabilities.extensions` but none of these methods, so they are
 * registered here as custom request handlers on the SDK's server.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { walkSkillFolder } from "./files.js";
import { mcpTypesModule } from "./mcp-sdk.js";
import { parseSkillMarkdown, SKILL_FILE_NAME } from "./parse.js";

/** A JSON-RPC "invalid params" error, as the SDK's own handlers reply. */
function invalidParams(message: string): Error {
  const { ErrorCode, McpError } = mcpTypesModule();
  return new McpError(ErrorCode.InvalidParams, message);
}

export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";
/** The extension's per-skill limits: hosts must accept up to these, servers should not exceed them. */
export const MAX_RESOURCES_PER_SKILL = 512;
export const MAX_SKILL_TOTAL_BYTES = 16 * 1024 * 1024;
/** Entries per `skills/list` page and children per `resources/directory/read` page. */
export const SKILLS_PAGE_SIZE = 50;
/** How long a host may treat a listing or entry as current (a hint, not an integrity property). */
export const SKILLS_TTL_MS = 60_000;

export interface ServedFile {
  /** Relative to the skill folder, `/`-separated. */
  readonly path: string;
  readonly bytes: Buffer;
}

export interface ServedSkill {
  /** `/`-separated; its last segment is the skill's name (`pdf-forms`, `web-frontend/navbar`). */
  readonly skillPath: string;
  readonly frontmatter: Readonly<Record<string, unknown>> & { name: string; description: string };
  readonly files: readonly ServedFile[];
}

/** Why a skill is not served; the extension's limits and its naming rules decide. */
export interface SkippedSkill {
  readonly path: string;
  readonly reason: string;
}

const MIME_TYPES: Readonly<Record<string, string>> = {
  ".md": "text/markdown",
  ".markdown": "text/markdown",
  ".txt": "text/plain",
  ".py": "text/x-python",
  ".sh": "text/x-shellscript",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".ts": "text/typescript",
  ".json": "application/json",
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
  ".toml": "application/toml",
  ".html": "text/html",
  ".css": "text/css",
  ".csv": "text/csv",
  ".xml": "application/xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".svg": "image/svg+xml",
  ".pdf": "application/pdf",
};

export function mimeTypeOf(path: string): string {
  return MIME_TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
}

export function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

function encodePath(path: string): string {
  return path
    .split("/")
    .map((segment) => encodeURIComponent(segment))
    .join("/");
}

export function skillFileUri(skillPath: string, filePath: string): string {
  return `skill://${encodePath(skillPath)}/${encodePath(filePath)}`;
}

/**
 * Read a skill folder into a served skill under `skillPath`, or say why it cannot be served:
 * no usable frontmatter, a last path segment other than its name, or over the extension's limits.
 */
export async function loadServedSkill(
  folder: string,
  skillPath: string,
): Promise<ServedSkill | SkippedSkill> {
  const skip = (reason: string): SkippedSkill => ({ path: folder, reason });
  const tree = await walkSkillFolder(folder, folder);
  const files: ServedFile[] = [];
  let total = 0;
  for (const entry of tree.entries) {
    if (entry.kind !== "file") continue;
    total += entry.size;
    if (files.length >= MAX_RESOURCES_PER_SKILL || total > MAX_SKILL_TOTAL_BYTES)
      return skip(
        `over the extension's limits (${MAX_RESOURCES_PER_SKILL} files, ${MAX_SKILL_TOTAL_BYTES} bytes per skill)`,
      );
    files.push({ path: entry.path, bytes: await readFile(join(folder, entry.path)) });
  }
  const skillFile = files.find((file) => file.path === SKILL_FILE_NAME);
  if (skillFile === undefined) return skip(`no ${SKILL_FILE_NAME}`);
  const parsed = parseSkillMarkdown(
    new TextDecoder("utf-8").decode(skillFile.bytes),
    join(folder, SKILL_FILE_NAME),
  );
  const frontmatter = parsed.frontmatter;
  const name = frontmatter?.name;
  const description = frontmatter?.description;
  if (frontmatter === undefined || typeof name !== "string" || typeof description !== "string")
    return skip("the frontmatter has no name and description");
  if (skillPath.split("/").at(-1) !== name)
    return skip(`the skill path "${skillPath}" does not end in its name "${name}"`);
  // JSON round trip: the entry carries the frontmatter as JSON (dates become strings).
  const asJson = JSON.parse(JSON.stringify(frontmatter)) as ServedSkill["frontmatter"];
  return { skillPath, frontmatter: asJson, files };
}

export function isServedSkill(value: ServedSkill | SkippedSkill): value is ServedSkill {
  return "files" in value;
}

function entryOf(skill: ServedSkill) {
  return {
    uri: skillFileUri(skill.skillPath, SKILL_FILE_NAME),
    frontmatter: skill.frontmatter,
    resources: skill.files.map((file) => ({
      uri: skillFileUri(skill.skillPath, file.path),
      digest: digestOf(file.bytes),
      size: file.bytes.length,
    })),
  };
}

const cacheable = { ttlMs: SKILLS_TTL_MS, cacheScope: "private" as const };

const listRequest = z.object({
  method: z.literal("skills/list"),
  params: z.object({ cursor: z.string().optional() }).passthrough().optional(),
});
const getRequest = z.object({
  method: z.literal("skills/get"),
  params: z.object({ uri: z.string() }).passthrough(),
});
const directoryRequest = z.object({
  method: z.literal("resources/directory/read"),
  params: z.object({ uri: z.string(), cursor: z.string().optional() }).passthrough(),
});

function pageOffset(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const offset = Number.parseInt(cursor, 10);
  if (!Number.isInteger(offset) || offset < 0 || String(offset) !== cursor)
    throw invalidParams(`invalid cursor "${cursor}"`);
  return offset;
}

interface DirectoryChild {
  readonly uri: string;
  readonly name: string;
  readonly mimeType: string;
  readonly size?: number;
}

/** Every directory of the served namespace (prefixes, skill roots, subfolders) and its children. */
function directoryTree(skills: readonly ServedSkill[]): Map<string, Map<string, DirectoryChild>> {
  const directories = new Map<string, Map<string, DirectoryChild>>();
  const childrenOf = (uri: string) => {
    let children = directories.get(uri);
    if (children === undefined) {
      children = new Map();
      directories.set(uri, children);
    }
    return children;
  };
  for (const skill of skills) {
    for (const file of skill.files) {
      const segments = [...skill.skillPath.split("/"), ...file.path.split("/")];
      for (let depth = 1; depth < segments.length; depth++) {
        const parent = `skill://${encodePath(segments.slice(0, depth).join("/"))}`;
        const name = segments[depth] as string;
        const uri = `${parent}/${encodeURIComponent(name)}`;
        const isFile = depth === segments.length - 1;
        childrenOf(parent).set(
          name,
          isFile
            ? { uri, name, mimeType: mimeTypeOf(name), size: file.bytes.length }
            : { uri, name, mimeType: "inode/directory" },
        );
        if (!isFile) childrenOf(uri);
      }
    }
  }
  return directories;
}

/**
 * Serve `skills` on `server` by the extension: declares `resources` and the extension (with
 * `directoryRead`), registers every file as a resource and answers `skills/list`, `skills/get`
 * and `resources/directory/read`. Call before the server connects to a transport.
 */
export function registerSkillsExtension(server: McpServer, skills: readonly ServedSkill[]): void {
  server.server.registerCapabilities({
    resources: {},
    extensions: { [SKILLS_EXTENSION]: { directoryRead: true } },
  });
  const entries = skills.map(entryOf);
  const byUri = new Map(entries.map((entry) => [entry.uri, entry]));
  for (const skill of skills) {
    for (const file of skill.files) {
      const uri = skillFileUri(skill.skillPath, file.path);
      const isSkillFile = file.path === SKILL_FILE_NAME;
      const mimeType = mimeTypeOf(file.path);
      server.registerResource(
        isSkillFile ? skill.frontmatter.name : `${skill.frontmatter.name}/${file.path}`,
        uri,
        {
          mimeType,
          size: file.bytes.length,
          ...(isSkillFile ? { description: skill.frontmatter.description } : {}),
        },
        async () => ({ contents: [contentOf(uri, mimeType, file.bytes)] }),
      );
    }
  }
  server.server.setRequestHandler(listRequest, async (request) => {
    const offset = pageOffset(request.params?.cursor);
    const page = entries.slice(offset, offset + SKILLS_PAGE_SIZE);
    const next =
      offset + SKILLS_PAGE_SIZE < entries.length ? String(offset + SKILLS_PAGE_SIZE) : undefined;
    return {
      resultType: "complete",
      skills: page,
      ...(next === undefined ? {} : { nextCursor: next }),
      ...cacheable,
    };
  });
  server.server.setRequestHandler(getRequest, async (request) => {
    const entry = byUri.get(request.params.uri);
    if (entry === undefined) throw invalidParams(`No skill is served at ${request.params.uri}`);
    return { resultType: "complete", skill: entry, ...cacheable };
  });
  const directories = directoryTree(skills);
  server.server.setRequestHandler(directoryRequest, async (request) => {
    const children = directories.get(request.params.uri);
    if (children === undefined)
      throw invalidParams(`${request.params.uri} is not a directory resource of this server`);
    const offset = pageOffset(request.params.cursor);
    const all = [...children.values()].sort((left, right) => (left.name < right.name ? -1 : 1));
    const next =
      offset + SKILLS_PAGE_SIZE < all.length ? String(offset + SKILLS_PAGE_SIZE) : undefined;
    return {
      resultType: "complete",
      resources: all.slice(offset, offset + SKILLS_PAGE_SIZE),
      ...(next === undefined ? {} : { nextCursor: next }),
    };
  });
}

/** UTF-8 text as `text` (its bytes are what the digest covers), anything else as base64 `blob`. */
function contentOf(uri: string, mimeType: string, bytes: Buffer) {
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    return { uri, mimeType, text };
  } catch {
    // Not UTF-8: served as base64 bytes, as MCP's blob content is meant for.
    return { uri, mimeType, blob: bytes.toString("base64") };
  }
}
