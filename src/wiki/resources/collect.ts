/**
 * Resource collection: a folder of resources (each top-level entry is one resource, its type
 * told by its form), a resource manifest file listing paths and URLs, or a URL. Each is hashed,
 * its licence recognised, and preprocessed into units for the distiller; URLs are fetched
 * first (`url.ts`) and then read by the same connectors as local files.
 *
 * One file (over 400 lines) because collecting is one dispatch from a resource's form to its
 * connector, hash and licence; the connectors themselves (article, repository, video, url) are
 * their own modules.
 */
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, extname, join, relative, resolve } from "node:path";
import { z } from "zod";
import { definedFields } from "../../core/defined.js";
import { InputError, type InputLocation } from "../../core/errors.js";
import { unlessMissing } from "../../core/fs.js";
import { runProcess } from "../../core/process.js";
import { type ResourceRecord, type ResourceType, resourceTypes } from "../meta.js";
import { readJsonFile } from "../store.js";
import { examplePageUnit, paragraphUnits, readArticle } from "./article.js";
import { isExamplePage, markdownTitle, markdownUnits } from "./document.js";
import {
  flagOfDeclared,
  type LicenceGuess,
  recogniseLicence,
  recogniseLicenceFiles,
} from "./licence.js";
import {
  extractCodeRegions,
  LICENCE_FILE_PATTERN,
  OTHER_LICENCE_FILE_PATTERN,
  readmeContext,
  repositoryFiles,
  repositoryHash,
} from "./repository.js";
import type { ExtractedUnit, PreparedResource } from "./types.js";
import {
  type FetchedResource,
  looksLikeUrl,
  manifestPathOf,
  parseResourceUrl,
  type RemoteOrigin,
  type RemoteResourceSpec,
} from "./url.js";
import {
  DEFAULT_KEY_FRAME_SETTINGS,
  embeddedTranscript,
  extractVideoUnits,
  FFMPEG_QUIET,
  type KeyFrameSettings,
  parseSubtitles,
} from "./video.js";

const MARKDOWN_EXTENSIONS = new Set([".md", ".markdown"]);
const ARTICLE_EXTENSIONS = new Set([".html", ".htm", ...MARKDOWN_EXTENSIONS]);
const VIDEO_EXTENSIONS = new Set([".mp4", ".webm", ".mkv", ".mov", ".avi"]);
const IMAGE_EXTENSIONS = new Map([
  [".png", "image/png"],
  [".jpg", "image/jpeg"],
  [".jpeg", "image/jpeg"],
  [".gif", "image/gif"],
  [".webp", "image/webp"],
]);
/** Files beside resources that describe them rather than being resources themselves. */
const SIDECAR_EXTENSIONS = new Set([".srt", ".vtt", ".license", ".txt", ".json", ".md"]);
const MAX_IMAGE_WIDTH = 1024;

export const resourceListSchema = z.strictObject({
  resources: z
    .array(
      z
        .strictObject({
          /** A file or folder relative to the list (a URL here is read as `url`). */
          path: z.string().min(1).optional(),
          /** http(s) article, image or video; http(s), ssh, git or file git repository. */
          url: z.string().min(1).optional(),
          /** Repositories: branch, tag or full commit id to clone. */
          ref: z.string().min(1).optional(),
          type: z.enum(resourceTypes).optional(),
          licence: z.string().min(1).optional(),
        })
        .refine((entry) => (entry.path === undefined) !== (entry.url === undefined), {
          message: 'give exactly one of "path" and "url"',
        })
        .refine((entry) => entry.ref === undefined || entry.url !== undefined, {
          message: '"ref" belongs to a repository "url"',
        }),
    )
    .min(1),
});

export interface ResourceInput {
  readonly absolutePath: string;
  /** As recorded in the manifest: relative to the resources root (forward slashes), or the URL. */
  readonly path: string;
  readonly type: ResourceType;
  readonly declaredLicence?: string;
  /** Set when the resource was fetched from a URL (then `absolutePath` is the local copy). */
  readonly remote?: RemoteOrigin;
  /**
   * Repositories read in part (the file a code search found): only these files (relative,
   * forward slashes) are hashed and cut into units, and a file without a top-level definition
   * is one whole-file unit. The licence and README are still read from the whole checkout.
   */
  readonly focus?: readonly string[];
}

/** One resource named by a `--resources` argument: on disk already, or a URL to fetch. */
export type ResourceSpec =
  | { readonly kind: "local"; readonly input: ResourceInput }
  | { readonly kind: "remote"; readonly remote: RemoteResourceSpec };

/** A fetched URL resource as the build reads it: the local copy, recorded under its URL. */
export function fetchedInput(remote: RemoteResourceSpec, fetched: FetchedResource): ResourceInput {
  return {
    absolutePath: fetched.absolutePath,
    path: remote.path,
    type: fetched.type,
    remote: fetched.origin,
    ...(remote.declaredLicence === undefined ? {} : { declaredLicence: remote.declaredLicence }),
  };
}

/** The manifest path a spec will have. */
export function specPath(spec: ResourceSpec): string {
  return spec.kind === "local" ? spec.input.path : spec.remote.path;
}

function remoteSpec(
  text: string,
  where: InputLocation,
  extra: { ref?: string; type?: ResourceType; licence?: string } = {},
): ResourceSpec {
  const url = parseResourceUrl(text, where);
  const withRef = extra.ref === undefined ? url : { ...url, ref: extra.ref };
  return {
    kind: "remote",
    remote: {
      path: manifestPathOf(withRef),
      url: withRef,
      where,
      ...definedFields({ type: extra.type, declaredLicence: extra.licence }),
    },
  };
}

/**
 * Resolve one `--resources` argument: a URL, a folder of resources, or a resource list whose
 * entries are paths or URLs. Local paths are checked now; URLs are only parsed (fetching is the
 * build's first step), so every mistake in the arguments is reported before anything is fetched.
 */
export async function resolveResourceArgument(
  input: string,
  where: InputLocation = { field: "--resources" },
): Promise<ResourceSpec[]> {
  if (looksLikeUrl(input)) return [remoteSpec(input, where)];
  const listed = await listResourceSpecs(input);
  return listed.specs;
}

/** The type of a resource from its form; undefined for sidecars and unknown files. */
export function resourceTypeOf(name: string, isDirectory: boolean): ResourceType | undefined {
  if (isDirectory) return "repository";
  const extension = extname(name).toLowerCase();
  if (ARTICLE_EXTENSIONS.has(extension)) return "article";
  if (VIDEO_EXTENSIONS.has(extension)) return "video";
  if (IMAGE_EXTENSIONS.has(extension)) return "image";
  return undefined;
}

/** Resolve a local `--resources`: a folder of resources or a resource list (JSON) without URLs. */
export async function listResourceInputs(
  input: string,
): Promise<{ root: string; inputs: ResourceInput[] }> {
  const { root, specs } = await listResourceSpecs(input);
  const inputs: ResourceInput[] = [];
  for (const spec of specs) {
    if (spec.kind === "remote")
      throw new InputError(
        "wiki.resources-url-unsupported",
        `${spec.remote.path}: URL resources are not read here; give the list to \`wiki build\` or to a URL connector`,
        spec.remote.where,
      );
    inputs.push(spec.input);
  }
  return { root, inputs };
}

async function listResourceSpecs(input: string): Promise<{ root: string; specs: ResourceSpec[] }> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(input);
  } catch (cause) {
    throw new InputError(
      "wiki.resources-missing",
      "no such folder or resource list",
      { file: input },
      { cause },
    );
  }
  if (info.isDirectory()) {
    const inputs: ResourceInput[] = [];
    const dirents = await readdir(input, { withFileTypes: true });
    dirents.sort((left, right) => (left.name < right.name ? -1 : 1));
    for (const dirent of dirents) {
      if (dirent.name.startsWith(".")) continue;
      const type = resourceTypeOf(dirent.name, dirent.isDirectory());
      if (type === undefined) {
        if (
          !SIDECAR_EXTENSIONS.has(extname(dirent.name).toLowerCase()) &&
          dirent.name !== "resources.json"
        )
          throw new InputError(
            "wiki.resources-unknown-type",
            `cannot tell the resource type of "${dirent.name}": expected a folder (repository), .html, .htm, .md or .markdown (article), a video (${[...VIDEO_EXTENSIONS].join(", ")}) or an image (${[...IMAGE_EXTENSIONS.keys()].join(", ")})`,
            { file: join(input, dirent.name) },
          );
        continue;
      }
      inputs.push({ absolutePath: join(input, dirent.name), path: dirent.name, type });
    }
    return { root: input, specs: inputs.map((each) => ({ kind: "local", input: each })) };
  }
  const list = await readJsonFile(input, resourceListSchema);
  const root = dirname(input);
  const specs: ResourceSpec[] = [];
  for (const [index, entry] of list.resources.entries()) {
    const url =
      entry.url ?? (entry.path !== undefined && looksLikeUrl(entry.path) ? entry.path : undefined);
    if (url !== undefined) {
      specs.push(
        remoteSpec(
          url,
          { file: input, field: `resources.${index}.${entry.url === undefined ? "path" : "url"}` },
          {
            ...definedFields({ ref: entry.ref, type: entry.type, licence: entry.licence }),
          },
        ),
      );
      continue;
    }
    const entryPath = entry.path ?? "";
    const absolutePath = resolve(root, entryPath);
    let entryInfo: Awaited<ReturnType<typeof stat>>;
    try {
      entryInfo = await stat(absolutePath);
    } catch (cause) {
      throw new InputError(
        "wiki.resources-missing",
        `resource "${entryPath}" does not exist`,
        { file: input, field: `resources.${index}.path` },
        { cause },
      );
    }
    const type = entry.type ?? resourceTypeOf(entryPath, entryInfo.isDirectory());
    if (type === undefined)
      throw new InputError(
        "wiki.resources-unknown-type",
        `cannot tell the type of "${entryPath}"; give "type" (${resourceTypes.join(", ")})`,
        { file: input, field: `resources.${index}.type` },
      );
    specs.push({
      kind: "local",
      input: {
        absolutePath,
        path: relative(root, absolutePath).split("\\").join("/"),
        type,
        ...(entry.licence === undefined ? {} : { declaredLicence: entry.licence }),
      },
    });
  }
  return { root, specs };
}

/** A companion file's text, or undefined when there is none; there but unreadable is an error. */
async function readOptional(path: string): Promise<string | undefined> {
  return unlessMissing(path, readFile(path, "utf8"));
}

/** A `<file>.license` sidecar: an SPDX-License-Identifier line, or a licence text. */
async function sidecarLicence(path: string): Promise<LicenceGuess> {
  const text = await readOptional(`${path}.license`);
  if (text === undefined) return { licence: null, flag: "unknown" };
  const spdx = /SPDX-License-Identifier:\s*(\S+)/.exec(text)?.[1];
  return spdx === undefined ? recogniseLicence(text) : flagOfDeclared(spdx);
}

function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

export interface PrepareOptions {
  /** Video key-frame sampling (default: scene changes at 0.3, at most 8 frames). */
  readonly keyFrames?: KeyFrameSettings;
}

/**
 * Preprocess one resource. `workDir` receives derived files (frames, normalised images) that
 * live only as long as the build.
 */
export async function prepareResource(
  input: ResourceInput,
  workDir: string,
  options: PrepareOptions = {},
): Promise<PreparedResource> {
  const companions: string[] = [];
  let extras: Pick<ResourceRecord, "key_frames" | "transcript" | "focus" | "unparsed"> = {};
  let licence: LicenceGuess = { licence: null, flag: "unknown" };
  let units: ExtractedUnit[] = [];
  let context = "";
  let hash: { sha256: string; bytes: number };
  switch (input.type) {
    case "repository": {
      const files = await repositoryFiles(input.absolutePath);
      const read =
        input.focus === undefined ? files : files.filter((file) => input.focus?.includes(file));
      if (input.focus !== undefined) {
        const absent = input.focus.filter((file) => !files.includes(file));
        if (absent.length > 0)
          throw new InputError(
            "wiki.resources-focus-missing",
            `${input.path}: the repository has no ${absent.map((file) => `"${file}"`).join(", ")}`,
            { file: input.path },
          );
        extras = { focus: [...read] };
      }
      hash = await repositoryHash(input.absolutePath, read);
      licence = await repositoryLicence(input.absolutePath, files);
      const unparsed: string[] = [];
      units = await extractCodeRegions(input.absolutePath, read, {
        wholeFiles: input.focus !== undefined,
        unparsed,
      });
      if (unparsed.length > 0) extras = { ...extras, unparsed };
      context = await readmeContext(input.absolutePath, files);
      break;
    }
    case "article": {
      const data = await readFile(input.absolutePath);
      hash = { sha256: sha256(data), bytes: data.length };
      const text = data.toString("utf8");
      if (MARKDOWN_EXTENSIONS.has(extname(input.absolutePath).toLowerCase())) {
        licence = await sidecarLicence(input.absolutePath);
        units = markdownUnits(text, basename(input.path));
        context = `Title: ${markdownTitle(text)}`;
        break;
      }
      const article = readArticle(text);
      if (article.declaredLicence !== null)
        licence = flagOfDeclared(
          recogniseLicence(article.declaredLicence).licence ?? article.declaredLicence,
        );
      if (licence.flag === "unknown") licence = await sidecarLicence(input.absolutePath);
      units = paragraphUnits(article);
      // A demo page is its own example: the whole page goes to the render gate as one unit.
      const prose = units.filter((unit) => unit.kind === "paragraph").length;
      if (isExamplePage(text, prose)) units.push(examplePageUnit(text, units.length));
      context = `Title: ${article.title}`;
      break;
    }
    case "video": {
      const data = await readFile(input.absolutePath);
      hash = { sha256: sha256(data), bytes: data.length };
      licence = await sidecarLicence(input.absolutePath);
      const stem = input.absolutePath.slice(
        0,
        input.absolutePath.length - extname(input.absolutePath).length,
      );
      let cues: ReturnType<typeof parseSubtitles> = [];
      let transcript: NonNullable<ResourceRecord["transcript"]> = { source: "none", cues: 0 };
      for (const extension of [".srt", ".vtt"]) {
        const subtitles = await readOptional(`${stem}${extension}`);
        if (subtitles === undefined) continue;
        cues = parseSubtitles(subtitles);
        const companion = `${input.path.slice(0, input.path.length - extname(input.path).length)}${extension}`;
        companions.push(companion);
        transcript = { source: "sidecar", from: companion, cues: cues.length };
        break;
      }
      // No file beside the video: a text subtitle track inside it is the transcript.
      if (transcript.source === "none") {
        const embedded = await embeddedTranscript(input.absolutePath);
        if (embedded !== undefined) {
          cues = embedded.cues;
          transcript = {
            source: "embedded",
            from: embedded.stream,
            codec: embedded.codec,
            ...(embedded.language === undefined ? {} : { language: embedded.language }),
            cues: cues.length,
          };
        }
      }
      const frames = join(workDir, "frames");
      await mkdir(frames, { recursive: true });
      const settings = options.keyFrames ?? DEFAULT_KEY_FRAME_SETTINGS;
      const extraction = await extractVideoUnits(input.absolutePath, cues, frames, settings);
      units = extraction.units;
      extras = {
        key_frames: {
          method: extraction.plan.method,
          ...(extraction.plan.fallbackReason === undefined
            ? {}
            : { fallback_reason: extraction.plan.fallbackReason }),
          scene_threshold: settings.sceneThreshold,
          min_scene_frames: settings.minSceneFrames,
          max_frames: settings.maxFrames,
          frame_spacing_seconds: settings.frameSpacingSeconds,
          duration_seconds: Number(extraction.durationSeconds.toFixed(3)),
          times_seconds: extraction.plan.frames.map((frame) => Number(frame.atSeconds.toFixed(3))),
        },
        transcript,
      };
      context =
        cues.length === 0
          ? "(no transcript)"
          : `Transcript:\n${cues.map((cue) => cue.text).join("\n")}`;
      break;
    }
    case "image": {
      const data = await readFile(input.absolutePath);
      hash = { sha256: sha256(data), bytes: data.length };
      licence = await sidecarLicence(input.absolutePath);
      const caption = await readOptional(`${input.absolutePath}.txt`);
      units = [await imageUnit(input.absolutePath, caption, workDir)];
      context = caption === undefined ? "" : `Caption: ${caption.trim()}`;
      break;
    }
  }
  if (input.declaredLicence !== undefined) licence = flagOfDeclared(input.declaredLicence);
  const record: ResourceRecord = {
    path: input.path,
    type: input.type,
    sha256: hash.sha256,
    bytes: hash.bytes,
    licence: licence.licence,
    licence_flag: licence.flag,
    companions,
    ...extras,
    ...remoteFields(input.remote),
  };
  return { record, absolutePath: input.absolutePath, context, units };
}

/** An image as its one unit: normalised for the model, with its caption file's text. */
async function imageUnit(
  path: string,
  caption: string | undefined,
  workDir: string,
): Promise<ExtractedUnit> {
  const imagePath = await normaliseImage(path, workDir);
  return {
    index: 0,
    kind: "image",
    locator: "image",
    text: caption?.trim() ?? "",
    imagePath,
    mediaType: imagePath.endsWith(".png")
      ? "image/png"
      : (IMAGE_EXTENSIONS.get(extname(imagePath).toLowerCase()) ?? "application/octet-stream"),
  };
}

/** Where a fetched resource came from, as the resource record spells it; nothing for local files. */
function remoteFields(remote: ResourceInput["remote"]): Partial<ResourceRecord> {
  if (remote === undefined) return {};
  return {
    url: remote.url,
    fetched_at: remote.fetchedAt,
    ...definedFields({ ref: remote.ref, commit: remote.commit, content_type: remote.contentType }),
  };
}

/**
 * A repository's licence: its licence file (with any other licence files beside it), else the
 * `license` its package.json declares.
 */
async function repositoryLicence(root: string, files: readonly string[]): Promise<LicenceGuess> {
  let licence: LicenceGuess = { licence: null, flag: "unknown" };
  const licenceFile = files.find((file) => LICENCE_FILE_PATTERN.test(file));
  const otherLicenceFiles = files.filter(
    (file) => file !== licenceFile && OTHER_LICENCE_FILE_PATTERN.test(file),
  );
  const licenceText = async (name: string) => ({
    name,
    text: await readFile(join(root, name), "utf8"),
  });
  if (licenceFile !== undefined || otherLicenceFiles.length > 0) {
    const others = [];
    for (const name of otherLicenceFiles) others.push(await licenceText(name));
    licence = recogniseLicenceFiles(
      licenceFile === undefined ? undefined : await licenceText(licenceFile),
      others,
    );
  }
  if (licence.flag === "unknown" && files.includes("package.json")) {
    const declared = (
      JSON.parse((await readOptional(join(root, "package.json"))) ?? "{}") as {
        license?: unknown;
      }
    ).license;
    if (typeof declared === "string") licence = flagOfDeclared(declared);
  }
  return licence;
}

/**
 * Image preprocessing: at most 1024 px wide, PNG, via ffmpeg when installed (so every model
 * gets the same bounded input); the original file otherwise.
 */
async function normaliseImage(path: string, workDir: string): Promise<string> {
  await mkdir(workDir, { recursive: true });
  const output = join(workDir, `${basename(path, extname(path))}.png`);
  const result = await runProcess(
    "ffmpeg",
    [
      ...FFMPEG_QUIET,
      "-y",
      "-i",
      path,
      "-vf",
      `scale='min(${MAX_IMAGE_WIDTH},iw)':-2`,
      "-frames:v",
      "1",
      output,
    ],
    { timeoutMs: 60_000 },
  );
  return result.exitCode === 0 ? output : path;
}
