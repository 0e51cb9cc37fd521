/**
 * Recorded agent outputs for the `replay` agent: a JSONL file, one prediction per line,
 * `{"skill","requirement","arm":"with"|"without"|"variant:<name>","config"?,"patch":"<unified diff>"}`. A key with
 * no prediction means the agent changed nothing.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { InputError } from "../../core/errors.js";
import { parseInput } from "../../core/parse.js";
import type { Arm } from "../store/results.js";

const predictionSchema = z.strictObject({
  skill: z.string().min(1),
  requirement: z.string().min(1),
  /** `variant:<name>` for a skill variant's arm (`--variant`). */
  arm: z.union([
    z.enum(["with", "without"]),
    z.custom<`variant:${string}`>(
      (value) => typeof value === "string" && /^variant:[A-Za-z0-9][A-Za-z0-9._-]*$/.test(value),
      { message: 'expected "with", "without" or "variant:<name>"' },
    ),
  ]),
  config: z.string().min(1).optional(),
  patch: z.string(),
});

export type Prediction = z.output<typeof predictionSchema>;

export interface PredictionKey {
  readonly config: string;
  readonly skill: string;
  readonly requirement: string;
  readonly arm: Arm;
}

export class Predictions {
  private constructor(
    readonly file: string,
    /** SHA-256 of the file's text, recorded in the run manifest. */
    readonly digest: string,
    private readonly byKey: ReadonlyMap<string, Prediction>,
  ) {}

  get size(): number {
    return this.byKey.size;
  }

  /**
   * The patch for a run: a prediction naming the configuration wins over one without; no
   * prediction at all is an empty patch (no change).
   */
  patchFor(key: PredictionKey): string {
    return (
      (this.byKey.get(mapKey(key.config, key)) ?? this.byKey.get(mapKey(undefined, key)))?.patch ??
      ""
    );
  }

  /** Parse JSONL text; a malformed line is an InputError naming the file and line. */
  static parse(text: string, file: string): Predictions {
    const byKey = new Map<string, Prediction>();
    const lines = text.split("\n");
    for (const [index, raw] of lines.entries()) {
      const line = index + 1;
      if (raw.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (error) {
        throw new InputError(
          "bench.predictions-json",
          `not a JSON object (${error instanceof Error ? error.message : String(error)}); expected {"skill","requirement","arm":"with"|"without","config"?,"patch"}`,
          { file, line },
        );
      }
      const prediction = parseInput(predictionSchema, value, {
        code: "bench.predictions-invalid",
        location: { file, line },
        describe: (problem) =>
          `${problem.message}; expected {"skill","requirement","arm":"with"|"without","config"?,"patch":"<unified diff>"}`,
      });
      const key = mapKey(prediction.config, prediction);
      if (byKey.has(key)) {
        throw new InputError(
          "bench.predictions-duplicate",
          `a second prediction for skill "${prediction.skill}", requirement "${prediction.requirement}", arm "${prediction.arm}"${prediction.config === undefined ? "" : `, config "${prediction.config}"`}`,
          { file, line },
        );
      }
      byKey.set(key, prediction);
    }
    return new Predictions(file, createHash("sha256").update(text).digest("hex"), byKey);
  }

  static async read(file: string): Promise<Predictions> {
    const text = await readFile(file, "utf8").catch((error: unknown) => {
      throw new InputError(
        "bench.predictions-unreadable",
        "cannot read the predictions file",
        {
          file,
        },
        { cause: error },
      );
    });
    return Predictions.parse(text, file);
  }
}

function mapKey(
  config: string | undefined,
  key: { readonly skill: string; readonly requirement: string; readonly arm: Arm },
): string {
  return JSON.stringify([config ?? null, key.skill, key.requirement, key.arm]);
}
