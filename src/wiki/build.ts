/**
 * `wiki build`: collect and preprocess resources, distil each with one model call, pass every
 * candidate through the five gates, and write accepted entries atomically. Holds the wiki's
 * build lock for the whole run.
 *
 * One file (over 400 lines) because the build is one locked transaction over the wiki (stage,
 * gate, merge, publish) whose steps share the build context; splitting would expose that context's
 * internals.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { InputError, InternalError } from "../core/errors.js";
import { unlessMissing } from "../core/fs.js";
import { parseResult } from "../core/parse.js";
import type { ModelClient } from "../model/index.js";
import { contentFindings, contentGateDetail, resourceFindings } from "./content-gate.js";
import { type Candidate, distilResource, loadDistillerPrompt, provenanceOf } from "./distill.js";
import {
  type CodeRunner,
  codeDigest,
  codeFileName,
  completenessGate,
  DeduplicationIndex,
  declaredModalities,
  deduplicationGate,
  defaultCodeRunner,
  executabilityGate,
  type GateName,
  type GateResult,
  modalityGate,
  provenanceGate,
  type StagedFiles,
  stageFile,
} from "./gates.js";
import {
  type ContentFinding,
  defaultThresholds,
  domainSchema,
  type ExecOk,
  type ResourceRecord,
  type SkillMeta,
  TEXT_ONLY_EXEC,
  TEXT_ONLY_NOTE,
  type Thresholds,
  type ValidationStatus,
  WIKI_ENTRY_FORMAT,
  WIKI_RESOURCES_FORMAT,
} from "./meta.js";
import {
  fetchedInput,
  prepareResource,
  type ResourceInput,
  type ResourceSpec,
  resolveResourceArgument,
  specPath,
} from "./resources/collect.js";
import { isFlagged } from "./resources/licence.js";
import type { PreparedResource } from "./resources/types.js";
import { cacheDownload, type FetchOptions, fetchRemoteResource } from "./resources/url.js";
import type { KeyFrameSettings } from "./resources/video.js";
import { writeSearchIndex } from "./search-index.js";
import {
  acquireBuildLock,
  jsonText,
  listEntries,
  loadOrCreateWikiManifest,
  OVERVIEW_FILE,
  readResourceManifest,
  type WikiEntry,
  writeEntry,
  writeResourceManifest,
  writeTaxonomy,
} from "./store.js";

export interface BuildOptions {
  readonly wiki: string;
  readonly domain: string;
  /**
   * Folders of resources, resource lists (JSON) and URLs, in order. Ignored when `inputs` is
   * given.
   */
  readonly resources?: string | readonly string[];
  /** Resources resolved (and fetched) already, e.g. by the online pool's connectors. */
  readonly inputs?: readonly ResourceInput[];
  /** Timeouts and size caps of URL resources. */
  readonly fetch?: FetchOptions;
  readonly model: ModelClient;
  /** Used only when the wiki is new; an existing wiki's frozen thresholds win. */
  readonly thresholds?: Thresholds;
  /** Default: bubblewrap when usable, else "sandbox unavailable" (exec_ok unknown). */
  readonly runner?: CodeRunner;
  readonly promptDir?: string;
  /** Send frames and images to the model (default true). */
  readonly vision?: boolean;
  readonly now?: () => Date;
  readonly onProgress?: (line: string) => void;
  /**
   * At most this many entries in the domain (the online pool's budget): a candidate that passes
   * every gate once the domain is full is reported `over-budget` and not written.
   */
  readonly maxEntries?: number;
}

export type CandidateOutcome =
  | "accepted"
  | "merged"
  | "reference-only"
  | "unverified"
  | "flagged"
  | "rejected"
  | "over-budget";

export interface CandidateReport {
  readonly skill_id: string;
  readonly skill_name: string;
  readonly source_path: string;
  readonly node_index: number;
  readonly outcome: CandidateOutcome;
  readonly rejected_by?: GateName;
  readonly merged_into?: string;
  readonly exec_ok?: ExecOk;
  /** The content gate's findings, when there are any. */
  readonly findings?: ContentFinding[];
  readonly gates: GateResult[];
}

export interface BuildSummary {
  readonly wiki: string;
  readonly domain: string;
  readonly resources: number;
  readonly flagged_licences: { path: string; licence: string | null; flag: string }[];
  /**
   * Resources with a high finding of their own (what the distiller read about them), as recorded
   * in resources.json: every entry distilled from one is flagged and names it.
   */
  readonly flagged_resources: { path: string; findings: ContentFinding[] }[];
  readonly candidates: number;
  readonly accepted: number;
  /** Of `accepted`, the text-only entries: verified by the text gates, nothing executed. */
  readonly accepted_text_only: number;
  readonly merged: number;
  readonly reference_only: number;
  readonly unverified: number;
  /** Written `flagged`: a high finding of the content gate. */
  readonly flagged: number;
  readonly over_budget: number;
  readonly rejected: Record<"completeness" | "provenance" | "modality", number>;
  readonly thresholds: Thresholds;
  readonly usage: { calls: number; input_tokens: number; output_tokens: number };
  readonly reports: CandidateReport[];
}

/** Where the executability gate's render of a page is kept in an entry. */
export const RENDER_FILE = "visual/render.png";

function overviewOf(candidate: Candidate): string {
  const section = (title: string, text: string) =>
    `## ${title}\n\n${text === "" ? "Not stated in the source." : text}\n`;
  return [
    `# ${candidate.skillName}\n`,
    section("Mechanism", candidate.textBody),
    section("When to use", candidate.applicability),
    section("Inputs", candidate.inputs),
    section("Expected effects", candidate.expectedEffects),
    ...(candidate.visualCaption === null || candidate.visualRefs.length === 0
      ? []
      : [section("Visual", candidate.visualCaption)]),
  ].join("\n");
}

async function stage(
  candidate: Candidate,
  resource: PreparedResource | undefined,
): Promise<StagedFiles> {
  const visual = [];
  for (const reference of candidate.visualRefs) {
    const unit = resource?.units.find((each) => each.index === reference);
    visual.push(await stageFile(unit?.imagePath, `visual ref ${reference}`));
  }
  return {
    byModality: {
      text: [{ path: OVERVIEW_FILE, data: Buffer.from(overviewOf(candidate)) }],
      visual,
      code:
        candidate.codeBody === null
          ? []
          : [
              {
                path: `code/${codeFileName(candidate.codeLanguage)}`,
                data: Buffer.from(candidate.codeBody),
              },
            ],
    },
  };
}

async function readEntryFiles(entry: WikiEntry): Promise<Record<string, Uint8Array>> {
  const files: Record<string, Uint8Array> = {};
  const all = [
    ...entry.meta.files.text,
    ...entry.meta.files.visual,
    ...entry.meta.files.code,
    "source/provenance.json",
    "source/excerpt.md",
  ];
  for (const relativePath of all) {
    // An entry written by an older build may lack an optional source file; an unreadable one
    // is an error, not a file to drop silently from the rewritten entry.
    const path = join(entry.dir, relativePath);
    const data = await unlessMissing(path, readFile(path));
    if (data !== undefined) files[relativePath] = data;
  }
  return files;
}

/** An entry's code as written (what the deduplication gate compares), null without code. */
async function entryCode(entry: WikiEntry): Promise<string | null> {
  const file = entry.meta.files.code[0];
  if (file === undefined) return null;
  const data = await unlessMissing(join(entry.dir, file), readFile(join(entry.dir, file), "utf8"));
  return data ?? null;
}

export async function buildWiki(options: BuildOptions): Promise<BuildSummary> {
  // The flag is the field: zod's path inside a plain string would be empty anyway.
  const domain = parseResult(domainSchema, options.domain);
  if (!domain.ok)
    throw new InputError(
      "wiki.domain-invalid",
      `domain "${options.domain}": ${domain.error.message}`,
      { field: "--domain" },
    );
  const progress = options.onProgress ?? (() => {});
  const now = options.now ?? (() => new Date());
  // Resolve the inputs and fetch every URL before taking the lock, so a mistyped path or a
  // dead URL creates nothing: downloads wait in a temporary folder until the build owns the wiki.
  const specs = await resourceSpecs(options);
  const folders: { fetch?: string; work?: string } = {};
  let lock: Awaited<ReturnType<typeof acquireBuildLock>> | undefined;
  let ownRunner: CodeRunner | undefined;
  try {
    const fetched = await fetchResources(specs, options, folders, progress);
    lock = await acquireBuildLock(options.wiki);
    folders.work = await mkdtemp(join(tmpdir(), "skillsmith-wiki-build-"));
    const inputs = await keepDownloads(options.wiki, fetched);
    const { manifest } = await loadOrCreateWikiManifest(
      options.wiki,
      options.thresholds ?? defaultThresholds,
      now,
    );
    const thresholds = manifest.thresholds;
    const prompt = await loadDistillerPrompt(options.domain, options.promptDir);
    ownRunner = options.runner === undefined ? await ownCodeRunner(thresholds, options) : undefined;
    const runner = options.runner ?? (ownRunner as CodeRunner);
    progress(
      `wiki build: ${inputs.length} resources for domain ${options.domain} (prompt ${basename(prompt.file)})`,
    );
    const prepared = await prepareAll(inputs, folders.work, thresholds, progress);
    const { existing, dedup } = await existingEntries(options.wiki, options.domain);
    // Judged once per resource, recorded once (resources.json), named by each entry it flags.
    const aboutResources = new Map(
      [...prepared.values()].map((resource) => [
        resource.record.path,
        resourceFindings(resource.context),
      ]),
    );
    const context: GateContext = {
      prepared,
      aboutResources,
      dedup,
      existing,
      runner,
      thresholds,
      now,
      wiki: options.wiki,
      maxEntries: options.maxEntries ?? Number.POSITIVE_INFINITY,
    };
    const { reports, usage } = await distilAndGate(options, prompt.text, context, progress);
    await writeManifests(options, prepared, aboutResources);
    return summaryOf(options, prepared, aboutResources, reports, thresholds, usage);
  } finally {
    await ownRunner?.close?.();
    if (folders.work !== undefined) await rm(folders.work, { recursive: true, force: true });
    if (folders.fetch !== undefined) await rm(folders.fetch, { recursive: true, force: true });
    await lock?.release();
  }
}

/** Every URL resource fetched into a temporary folder (made on the first one); local ones as given. */
async function fetchResources(
  specs: Awaited<ReturnType<typeof resourceSpecs>>,
  options: BuildOptions,
  folders: { fetch?: string },
  progress: (line: string) => void,
): Promise<ResourceInput[]> {
  const fetched: ResourceInput[] = [];
  for (const [index, spec] of specs.entries()) {
    if (spec.kind === "local") {
      fetched.push(spec.input);
      continue;
    }
    progress(`  fetching ${spec.remote.path}`);
    folders.fetch ??= await mkdtemp(join(tmpdir(), "skillsmith-wiki-fetch-"));
    const resource = await fetchRemoteResource(spec.remote, join(folders.fetch, String(index)), {
      ...(options.now === undefined ? {} : { now: options.now }),
      ...options.fetch,
    });
    fetched.push(fetchedInput(spec.remote, resource));
  }
  return fetched;
}

/**
 * Downloaded documents are kept in the wiki (content-addressed) so the bytes each skill was
 * distilled from stay inspectable; clones stay temporary (the commit is recorded instead).
 */
async function keepDownloads(wiki: string, fetched: ResourceInput[]): Promise<ResourceInput[]> {
  const inputs: ResourceInput[] = [];
  for (const input of fetched) {
    const sha256 = input.remote?.sha256;
    inputs.push(
      input.remote === undefined || input.type === "repository" || sha256 === undefined
        ? input
        : { ...input, absolutePath: await cacheDownload(wiki, input.absolutePath, sha256) },
    );
  }
  return inputs;
}

function ownCodeRunner(thresholds: Thresholds, options: BuildOptions): Promise<CodeRunner> {
  return defaultCodeRunner({
    viewport: {
      width: thresholds.render_viewport_width,
      height: thresholds.render_viewport_height,
    },
    memoryBytes: thresholds.exec_memory_bytes,
    // SKILLSMITH_CHROMIUM is read from the caller's environment (the CLI's, in tests).
    ...(options.fetch?.env === undefined ? {} : { env: options.fetch.env }),
  });
}

async function prepareAll(
  inputs: readonly ResourceInput[],
  buildDir: string,
  thresholds: Thresholds,
  progress: (line: string) => void,
): Promise<Map<string, PreparedResource>> {
  const prepared = new Map<string, PreparedResource>();
  for (const [index, input] of inputs.entries()) {
    const resource = await prepareResource(input, join(buildDir, String(index)), {
      keyFrames: keyFrameSettings(thresholds),
    });
    prepared.set(resource.record.path, resource);
    const flag = isFlagged(resource.record.licence_flag)
      ? `  [licence ${resource.record.licence_flag}]`
      : "";
    progress(`  prepared ${input.type} ${input.path}: ${resource.units.length} units${flag}`);
  }
  return prepared;
}

/** The domain's entries already in the wiki, and the deduplication index over them. */
async function existingEntries(
  wiki: string,
  domain: string,
): Promise<{ existing: Map<string, WikiEntry>; dedup: DeduplicationIndex }> {
  const existing = new Map<string, WikiEntry>();
  const dedup = new DeduplicationIndex();
  for (const entry of await listEntries(wiki, domain)) {
    existing.set(entry.meta.skill_id, entry);
    dedup.add(
      entry.meta.skill_id,
      entry.meta.provenance.map((each) => each.source_path),
      entry.meta.skill_name,
      await entryCode(entry),
    );
  }
  return { existing, dedup };
}

/** One distiller call per resource, every candidate through the gates, in resource order. */
async function distilAndGate(
  options: BuildOptions,
  prompt: string,
  context: GateContext,
  progress: (line: string) => void,
): Promise<{ reports: CandidateReport[]; usage: BuildSummary["usage"] }> {
  const reports: CandidateReport[] = [];
  const usage = { calls: 0, input_tokens: 0, output_tokens: 0 };
  let position = 0;
  for (const resource of context.prepared.values()) {
    position += 1;
    progress(`[${position}/${context.prepared.size}] distilling ${resource.record.path}`);
    const result = await distilResource(options.model, resource, {
      domain: options.domain,
      prompt,
      thresholds: context.thresholds,
      vision: options.vision ?? true,
    });
    usage.calls += 1;
    usage.input_tokens += result.inputTokens;
    usage.output_tokens += result.outputTokens;
    for (const candidate of result.candidates) {
      const report = await gateCandidate(candidate, context);
      reports.push(report);
      progress(
        `    ${report.outcome.padEnd(14)} ${candidate.skillName || "(no name)"}${report.rejected_by === undefined ? "" : ` — ${report.rejected_by}: ${report.gates.find((gate) => gate.gate === report.rejected_by)?.detail ?? ""}`}`,
      );
    }
  }
  return { reports, usage };
}

/** The resource manifest (earlier records kept), the taxonomy, then the search index. */
async function writeManifests(
  options: BuildOptions,
  prepared: ReadonlyMap<string, PreparedResource>,
  aboutResources: ReadonlyMap<string, readonly ContentFinding[]>,
): Promise<void> {
  const previous = await readResourceManifest(options.wiki, options.domain);
  const records = new Map<string, ResourceRecord>();
  for (const record of previous?.resources ?? []) records.set(record.path, record);
  for (const resource of prepared.values()) {
    const findings = aboutResources.get(resource.record.path) ?? [];
    records.set(
      resource.record.path,
      findings.length === 0 ? resource.record : { ...resource.record, findings: [...findings] },
    );
  }
  await writeResourceManifest(options.wiki, {
    format: WIKI_RESOURCES_FORMAT,
    domain: options.domain,
    resources: [...records.values()].sort((left, right) => (left.path < right.path ? -1 : 1)),
  });
  await writeTaxonomy(options.wiki, options.domain);
  // Last, once every entry and manifest is written: the index's stamp then matches them.
  await writeSearchIndex(options.wiki);
}

function summaryOf(
  options: BuildOptions,
  prepared: ReadonlyMap<string, PreparedResource>,
  aboutResources: ReadonlyMap<string, readonly ContentFinding[]>,
  reports: CandidateReport[],
  thresholds: Thresholds,
  usage: BuildSummary["usage"],
): BuildSummary {
  const count = (outcome: CandidateOutcome) =>
    reports.filter((report) => report.outcome === outcome).length;
  const rejectedBy = (gate: GateName) =>
    reports.filter((report) => report.rejected_by === gate).length;
  return {
    wiki: options.wiki,
    domain: options.domain,
    resources: prepared.size,
    flagged_licences: [...prepared.values()]
      .filter((resource) => isFlagged(resource.record.licence_flag))
      .map((resource) => ({
        path: resource.record.path,
        licence: resource.record.licence,
        flag: resource.record.licence_flag,
      })),
    flagged_resources: [...aboutResources]
      .filter(([, findings]) => findings.some((finding) => finding.severity === "high"))
      .map(([path, findings]) => ({ path, findings: [...findings] })),
    candidates: reports.length,
    accepted: count("accepted"),
    accepted_text_only: reports.filter(
      (report) => report.outcome === "accepted" && report.exec_ok === TEXT_ONLY_EXEC,
    ).length,
    merged: count("merged"),
    reference_only: count("reference-only"),
    unverified: count("unverified"),
    flagged: count("flagged"),
    over_budget: count("over-budget"),
    rejected: {
      completeness: rejectedBy("completeness"),
      provenance: rejectedBy("provenance"),
      modality: rejectedBy("modality"),
    },
    thresholds,
    usage,
    reports,
  };
}

/** The video connector's sampling numbers, as frozen in the wiki's thresholds. */
export function keyFrameSettings(thresholds: Thresholds): KeyFrameSettings {
  return {
    sceneThreshold: thresholds.video_scene_threshold,
    minSceneFrames: thresholds.video_min_scene_frames,
    maxFrames: thresholds.video_max_frames,
    frameSpacingSeconds: thresholds.video_frame_spacing_seconds,
  };
}

/** The build's resources in order; the same manifest path twice is a mistake. */
async function resourceSpecs(options: BuildOptions): Promise<ResourceSpec[]> {
  let specs: ResourceSpec[];
  if (options.inputs !== undefined)
    specs = options.inputs.map((input) => ({ kind: "local", input }));
  else {
    const given =
      typeof options.resources === "string" ? [options.resources] : [...(options.resources ?? [])];
    if (given.length === 0)
      throw new InputError("wiki.resources-none", "no resources given", {
        field: "--resources",
      });
    specs = [];
    for (const argument of given) specs.push(...(await resolveResourceArgument(argument)));
  }
  const seen = new Set<string>();
  for (const spec of specs) {
    const path = specPath(spec);
    if (seen.has(path))
      throw new InputError(
        "wiki.resources-duplicate",
        `resource "${path}" is given twice; manifest paths (and so skill ids) must be unique`,
        { field: "--resources" },
      );
    seen.add(path);
  }
  return specs;
}

interface GateContext {
  readonly prepared: ReadonlyMap<string, PreparedResource>;
  /** Each resource's own findings (`resourceFindings`), by manifest path. */
  readonly aboutResources: ReadonlyMap<string, readonly ContentFinding[]>;
  readonly dedup: DeduplicationIndex;
  readonly existing: Map<string, WikiEntry>;
  readonly runner: CodeRunner;
  readonly thresholds: Thresholds;
  readonly now: () => Date;
  readonly wiki: string;
  readonly maxEntries: number;
}

function skipped(after: GateName[]): GateResult[] {
  return after.map((gate) => ({
    gate,
    status: "skipped" as const,
    detail: "decided by an earlier gate",
  }));
}

async function gateCandidate(given: Candidate, context: GateContext): Promise<CandidateReport> {
  let candidate = given;
  const base = () => ({
    skill_id: candidate.skillId,
    skill_name: candidate.skillName,
    source_path: candidate.sourcePath,
    node_index: candidate.nodeIndex,
  });
  const gates: GateResult[] = [];
  const complete = completenessGate(candidate, context.thresholds);
  gates.push(complete);
  if (complete.status === "fail")
    return {
      ...base(),
      outcome: "rejected",
      rejected_by: "completeness",
      gates: [
        ...gates,
        ...skipped(["provenance", "deduplication", "modality", "content", "executability"]),
      ],
    };
  const provenance = provenanceGate(candidate, context.prepared);
  gates.push(provenance);
  if (provenance.status === "fail")
    return {
      ...base(),
      outcome: "rejected",
      rejected_by: "provenance",
      gates: [...gates, ...skipped(["deduplication", "modality", "content", "executability"])],
    };
  const resource = context.prepared.get(candidate.sourcePath);
  if (resource === undefined)
    throw new InternalError(
      "wiki.build-provenance",
      `the provenance gate passed ${candidate.sourcePath}, which names no prepared resource`,
    );
  const duplicate = deduplicationGate(candidate, context.dedup);
  gates.push({ gate: duplicate.gate, status: duplicate.status, detail: duplicate.detail });
  if (duplicate.identity.kind === "merge") {
    await mergeInto(duplicate.identity, candidate, resource, context);
    return {
      ...base(),
      outcome: "merged",
      merged_into: duplicate.identity.id,
      gates: [...gates, ...skipped(["modality", "content", "executability"])],
    };
  }
  // A different skill from an already used unit is gated and written under its own id.
  if (duplicate.identity.id !== candidate.skillId)
    candidate = { ...candidate, skillId: duplicate.identity.id };
  const staged = await stage(candidate, resource);
  const modality = modalityGate(candidate, staged);
  gates.push(modality);
  if (modality.status === "fail")
    return {
      ...base(),
      outcome: "rejected",
      rejected_by: "modality",
      gates: [...gates, ...skipped(["content", "executability"])],
    };
  const findings = contentFindings({
    overview: overviewOf(candidate),
    excerpt: resource.units[candidate.nodeIndex]?.text ?? "",
    ...(candidate.codeBody === null
      ? {}
      : {
          code: {
            path: `code/${codeFileName(candidate.codeLanguage)}`,
            text: candidate.codeBody,
            language: candidate.codeLanguage ?? "unknown",
          },
        }),
  });
  const content = contentGateDetail(findings, {
    path: resource.record.path,
    findings: context.aboutResources.get(resource.record.path) ?? [],
  });
  gates.push({ gate: "content", status: content.status, detail: content.detail });
  // Flagged code is not run: nothing it could show would make it verified.
  const executable =
    content.status === "fail"
      ? ({
          gate: "executability",
          status: "skipped",
          detail: "not run: the content gate flagged the entry",
          execOk: "unknown",
        } as const)
      : await executabilityGate(candidate, context.runner, context.thresholds, resource);
  gates.push({ gate: executable.gate, status: executable.status, detail: executable.detail });
  if (context.existing.size >= context.maxEntries)
    return { ...base(), outcome: "over-budget", exec_ok: executable.execOk, gates };
  const { status, note } = validationOf(content, executable);
  await writeCandidate(candidate, resource, staged, context, {
    status,
    note,
    execOk: executable.execOk,
    findings,
    ...("screenshot" in executable && executable.screenshot !== undefined
      ? { screenshot: executable.screenshot }
      : {}),
  });
  const outcome: CandidateOutcome = status === "verified" ? "accepted" : status;
  return {
    ...base(),
    outcome,
    exec_ok: executable.execOk,
    ...(findings.length === 0 ? {} : { findings }),
    gates,
  };
}

/**
 * The entry's status: flagged by a high finding; reference-only when its code failed;
 * unverified when it could not be run here. A text-only entry (nothing to run) is verified by
 * the text gates alone: exec_ok "not-applicable" and a note saying nothing was executed, so no
 * card, report or MCP answer presents it as code that ran and passed (README, "Gates and outcomes").
 */
function validationOf(
  content: { status: "pass" | "fail"; detail: string },
  executable: GateResult & { execOk: ExecOk },
): { status: ValidationStatus; note: string | null } {
  if (content.status === "fail") return { status: "flagged", note: content.detail };
  if (executable.execOk === false) return { status: "reference-only", note: executable.detail };
  if (executable.status === "unknown") return { status: "unverified", note: executable.detail };
  if (executable.execOk === TEXT_ONLY_EXEC) return { status: "verified", note: TEXT_ONLY_NOTE };
  return { status: "verified", note: null };
}

async function writeCandidate(
  candidate: Candidate,
  resource: PreparedResource,
  staged: StagedFiles,
  context: GateContext,
  verdict: {
    status: ValidationStatus;
    note: string | null;
    execOk: ExecOk;
    findings: ContentFinding[];
    screenshot?: Uint8Array;
  },
): Promise<void> {
  const files: Record<string, Uint8Array> = {};
  const paths: Record<"text" | "visual" | "code", string[]> = { text: [], visual: [], code: [] };
  const modalities = declaredModalities(candidate);
  for (const modality of modalities) {
    for (const file of staged.byModality[modality]) {
      const relativePath = modality === "visual" ? `visual/${file.path}` : file.path;
      if (file.data !== undefined) files[relativePath] = file.data;
      paths[modality].push(relativePath);
    }
  }
  // A page that rendered (HTML, CSS, SVG) keeps its screenshot as a visual.
  if (verdict.screenshot !== undefined && verdict.screenshot.length > 0) {
    files[RENDER_FILE] = verdict.screenshot;
    paths.visual.push(RENDER_FILE);
    if (!modalities.includes("visual")) modalities.splice(modalities.indexOf("code"), 0, "visual");
  }
  const provenanceRecord = provenanceOf(candidate, resource);
  files["source/provenance.json"] = Buffer.from(
    jsonText({ provenance: [provenanceRecord], resource: resource.record }),
  );
  files["source/excerpt.md"] = Buffer.from(`${resource.units[candidate.nodeIndex]?.text ?? ""}\n`);
  const timestamp = context.now().toISOString();
  const meta: SkillMeta = {
    format: WIKI_ENTRY_FORMAT,
    skill_id: candidate.skillId,
    skill_name: candidate.skillName,
    domain: candidate.domain,
    category_path: candidate.categoryPath,
    tags: candidate.tags,
    applicability: candidate.applicability,
    source: { type: resource.record.type },
    provenance: [provenanceRecord],
    modalities_present: modalities,
    files: paths,
    code_language: candidate.codeLanguage,
    exec_ok: verdict.execOk,
    validation_status: verdict.status,
    validation_note: verdict.note,
    merged: [],
    merges: [],
    findings: verdict.findings,
    created: timestamp,
    updated: timestamp,
  };
  const dir = await writeEntry(context.wiki, { meta, files });
  context.existing.set(meta.skill_id, { dir, meta });
  context.dedup.add(meta.skill_id, [candidate.sourcePath], candidate.skillName, candidate.codeBody);
}

/**
 * Fold a duplicate into the entry it duplicates. The entry keeps its own tags (a tag the
 * survivor's own evidence does not support would make it a hit for what it does not teach);
 * the candidate's id, name, reason, provenance, code digest and tags are recorded in `merges`.
 */
async function mergeInto(
  identity: { id: string; reason: string },
  candidate: Candidate,
  resource: PreparedResource,
  context: GateContext,
): Promise<void> {
  const target = context.existing.get(identity.id);
  if (target === undefined) return;
  const meta = target.meta;
  const provenance = [...meta.provenance];
  const incoming = provenanceOf(candidate, resource);
  if (
    !provenance.some(
      (each) =>
        each.source_path === incoming.source_path &&
        each.node_index === incoming.node_index &&
        each.sha256 === incoming.sha256,
    )
  )
    provenance.push(incoming);
  const merged =
    candidate.skillId === identity.id || meta.merged.includes(candidate.skillId)
      ? meta.merged
      : [...meta.merged, candidate.skillId];
  const updated: SkillMeta = {
    ...meta,
    provenance,
    merged,
    merges: [
      ...meta.merges,
      {
        skill_id: candidate.skillId,
        skill_name: candidate.skillName,
        reason: identity.reason,
        provenance: incoming,
        code_sha256: codeDigest(candidate.codeBody),
        tags: candidate.tags,
      },
    ],
    updated: context.now().toISOString(),
  };
  const dir = await writeEntry(context.wiki, {
    meta: updated,
    files: await readEntryFiles(target),
  });
  context.existing.set(identity.id, { dir, meta: updated });
}

/** For reports: a path relative to the current folder when inside it. */
export function displayPath(path: string, cwd: string): string {
  const inside = relative(cwd, path);
  return inside.startsWith("..") || inside === "" ? path : inside;
}
