/**
 * Per-domain capabilities for the MCP `apply` action. `<wiki>/<domain>/capabilities.json`
 * declares what a domain offers and which implementation provides it; only built-in
 * implementations exist, and a declaration nothing implements stops the server from starting.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { type CodeRunner, codeFileName, type RunLimits } from "./gates.js";
import { WIKI_CAPABILITIES_FORMAT, wikiFileSchema } from "./meta.js";
import {
  CAPABILITIES_FILE,
  listDomains,
  OVERVIEW_FILE,
  readJsonFile,
  type WikiEntry,
} from "./store.js";

export const capabilitiesSchema = wikiFileSchema(WIKI_CAPABILITIES_FORMAT, {
  domain: z.string(),
  capabilities: z.array(
    z.strictObject({
      name: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/),
      description: z.string(),
      implementation: z.string(),
    }),
  ),
});
export type CapabilitiesManifest = z.infer<typeof capabilitiesSchema>;

export type ApplyResult =
  | { status: "applied"; capability: string; skill_id: string; output: Record<string, unknown> }
  | {
      status: "not-applicable";
      capability: string;
      skill_id: string;
      reason: string;
      available: string[];
    };

export interface ApplyContext {
  readonly runner: CodeRunner;
  readonly limits: RunLimits;
}

type Implementation = (
  entry: WikiEntry,
  input: Record<string, unknown>,
  context: ApplyContext,
) => Promise<{ ok: true; output: Record<string, unknown> } | { ok: false; reason: string }>;

/** Everything `apply` can be backed by. */
export const builtinImplementations: Readonly<Record<string, Implementation>> = {
  /** Return the skill's instructions, for an agent to follow itself. */
  "builtin:instructions": async (entry) => ({
    ok: true,
    output: { overview: await readFile(join(entry.dir, OVERVIEW_FILE), "utf8") },
  }),
  /** Run the skill's code in the sandbox on the given stdin. */
  "builtin:run-code": async (entry, input, context) => {
    const file = entry.meta.files.code[0];
    if (file === undefined) return { ok: false, reason: "the skill has no code" };
    if (entry.meta.exec_ok !== true)
      return {
        ok: false,
        reason: `the skill's code did not pass the executability gate (exec_ok ${String(entry.meta.exec_ok)})`,
      };
    const language = entry.meta.code_language ?? "unknown";
    if (!file.endsWith(codeFileName(language)))
      return { ok: false, reason: `no runner for ${language} code` };
    const code = await readFile(join(entry.dir, file), "utf8");
    const stdin = typeof input.stdin === "string" ? input.stdin : "";
    const outcome = await context.runner.run(code, language, stdin, context.limits);
    if (outcome.status === "unavailable") return { ok: false, reason: outcome.detail };
    // The program's own output is what an agent applies the skill for; bounded by the runner.
    return {
      ok: true,
      output: {
        status: outcome.status,
        detail: outcome.detail,
        stdout: outcome.stdout ?? "",
        stderr: outcome.stderr ?? "",
      },
    };
  },
};

/** Every domain's capabilities; refuses (InputError) a declaration nothing implements. */
export async function loadCapabilities(root: string): Promise<Map<string, CapabilitiesManifest>> {
  const manifests = new Map<string, CapabilitiesManifest>();
  for (const domain of await listDomains(root)) {
    const path = join(root, domain, CAPABILITIES_FILE);
    if (!existsSync(path)) continue;
    const manifest = await readJsonFile(path, capabilitiesSchema);
    manifest.capabilities.forEach((capability, index) => {
      if (builtinImplementations[capability.implementation] === undefined)
        throw new InputError(
          "wiki.capability-unimplemented",
          `capability "${capability.name}" names implementation "${capability.implementation}", which nothing implements (known: ${Object.keys(builtinImplementations).join(", ")})`,
          { file: path, field: `capabilities.${index}.implementation` },
        );
    });
    manifests.set(domain, manifest);
  }
  return manifests;
}

export async function applyCapability(
  entry: WikiEntry,
  capability: string,
  input: Record<string, unknown>,
  manifests: ReadonlyMap<string, CapabilitiesManifest>,
  context: ApplyContext,
): Promise<ApplyResult> {
  const manifest = manifests.get(entry.meta.domain);
  const available = manifest?.capabilities.map((each) => each.name) ?? [];
  const declared = manifest?.capabilities.find((each) => each.name === capability);
  const base = { capability, skill_id: entry.meta.skill_id };
  if (declared === undefined)
    return {
      ...base,
      status: "not-applicable",
      reason: `domain "${entry.meta.domain}" does not offer the capability "${capability}"`,
      available,
    };
  const implementation = builtinImplementations[declared.implementation];
  if (implementation === undefined)
    return {
      ...base,
      status: "not-applicable",
      reason: `no implementation ${declared.implementation}`,
      available,
    };
  const result = await implementation(entry, input, context);
  return result.ok
    ? { ...base, status: "applied", output: result.output }
    : { ...base, status: "not-applicable", reason: result.reason, available };
}
