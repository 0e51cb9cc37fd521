/**
 * The schema of a prepared base's `meta.json`: what `readStoredBase` reads back through zod, so a
 * damaged, foreign or later file is an error naming the file and the field, never a base whose
 * missing fields surface as `undefined` deep in a run. Kept beside `base.ts`, which owns the types;
 * `StoredBaseFile` is checked against `StoredBase` where it is read.
 */
import { z } from "zod";
import { formatTag } from "../../core/format-tag.js";
import { formatTagSchema, readingOlderTags } from "../../core/format-tag-schema.js";

/** The tag `prepareBase` writes into `meta.json`; files from before it have none. */
export const BASE_META_FORMAT = formatTag("base", 1);

const strings = z.array(z.string());
const variables = z.record(z.string(), z.string());

const setupStepSchema: z.ZodType<SetupStepShape> = z.lazy(() =>
  z.object({
    kind: z.enum(["toolchain", "environment", "install"]),
    command: z.string(),
    why: z.string(),
    optional: z.boolean().exactOptional(),
    fallback: setupStepSchema.exactOptional(),
    timeoutSeconds: z.number().exactOptional(),
  }),
);

interface SetupStepShape {
  kind: "toolchain" | "environment" | "install";
  command: string;
  why: string;
  optional?: boolean;
  fallback?: SetupStepShape;
  timeoutSeconds?: number;
}

const installerSchema = z.enum(["npm", "yarn", "pnpm", "pip", "go", "dotnet"]);

const setupPlanSchema = z.object({
  language: z.enum(["python", "node", "go", "rust", "java", "ruby", "unknown"]),
  baseImage: z.string(),
  network: z.enum(["online", "offline"]),
  steps: z.array(setupStepSchema),
  commands: strings,
  reasons: strings,
  origin: z.enum(["explicit", "detected"]),
  toolchain: z.object({ programs: strings, debianPackages: strings }),
  environment: z
    .object({ path: z.string(), binPaths: strings, runEnv: variables, setupEnv: variables })
    .exactOptional(),
  python: z
    .object({
      name: z.string().exactOptional(),
      buildBackend: z.string().exactOptional(),
      backendModule: z.string().exactOptional(),
      sourceRoots: strings,
      testExtra: z.string().exactOptional(),
      testGroup: strings.exactOptional(),
      testGroupName: z.string().exactOptional(),
      reasons: strings,
      interpreter: z.string(),
    })
    .exactOptional(),
  caches: z
    .array(
      z.object({
        installer: installerSchema,
        path: z.string(),
        installs: z.array(
          z.object({
            installer: installerSchema,
            command: z.string(),
            served: z.enum(["cache", "setup", "unservable", "offline", "nothing"]),
            fill: strings.exactOptional(),
            reason: z.string().exactOptional(),
            // Kept on a reused environment, for the check's timeout reason (install-caches.ts).
            scripts: strings.exactOptional(),
          }),
        ),
      }),
    )
    .exactOptional(),
});

interface SetupStepOutcomeShape {
  command: string;
  why: string;
  outcome: "ok" | "failed" | "skipped" | "fell-back";
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  outputTail: string;
  fallback?: SetupStepOutcomeShape;
}

const setupStepOutcomeSchema: z.ZodType<SetupStepOutcomeShape> = z.lazy(() =>
  z.object({
    command: z.string(),
    why: z.string(),
    outcome: z.enum(["ok", "failed", "skipped", "fell-back"]),
    exitCode: z.number().nullable(),
    timedOut: z.boolean(),
    durationMs: z.number(),
    outputTail: z.string(),
    fallback: setupStepOutcomeSchema.exactOptional(),
  }),
);

const storedBaseSchema = z.object({
  format: formatTagSchema(BASE_META_FORMAT),
  key: z.string(),
  repositoryName: z.string(),
  source: z.string(),
  requestedCommit: z.string(),
  commit: z.string(),
  workspaceMountPath: z.string(),
  // JSON has no undefined: a base prepared without setup has no `setup` key.
  setup: setupPlanSchema.optional(),
  setupReport: z
    .object({
      network: z.enum(["online", "offline"]),
      networkReason: z.string(),
      target: z.enum(["tree", "image", "none"]),
      steps: z.array(setupStepOutcomeSchema),
      durationMs: z.number(),
      interpreter: z.string().exactOptional(),
      notes: strings,
    })
    .exactOptional(),
  runtime: z
    .object({
      mount: z.object({ hostPath: z.string(), sandboxPath: z.string() }).exactOptional(),
      binPaths: strings,
      env: variables,
    })
    .exactOptional(),
  environment: z
    .object({ image: z.string(), baseImage: z.string(), notes: strings })
    .exactOptional(),
  digest: z.string(),
  removedSkillFolders: strings,
  skillHistory: z
    .object({ commitsWithSkills: z.number(), operationsDropped: z.number(), head: z.string() })
    .exactOptional(),
  preparedAt: z.string(),
});

/** `meta.json` as written by any version: untagged files (before the tag) read as format 1. */
export const storedBaseFileSchema = readingOlderTags(storedBaseSchema, BASE_META_FORMAT, [
  { style: "none" },
]);

export type StoredBaseFile = z.output<typeof storedBaseFileSchema>;
