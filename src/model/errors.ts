/**
 * Errors of model access. An exhausted retry budget is an `InfrastructureError` (from core);
 * the two classes here are the model's own bad answer and a replay that has no recording.
 */
import { type ErrorOptions, InputError, SkillsmithError } from "../core/errors.js";

/**
 * The model answered, but not usefully: structured output that fails validation after the
 * repair attempt, or an empty answer. Distinct from infrastructure failures: retrying the same
 * request is not expected to help, and it counts against the model, not the endpoint.
 */
export class ModelOutputError extends SkillsmithError {
  readonly family = "agent" as const;
  constructor(message: string, options: ErrorOptions = {}) {
    super("model.output-invalid", message, { ...options, retryable: false });
  }
}

/** `replay-only` cache mode and the call was never recorded: the replay cannot be exact. */
export class CacheMissError extends InputError {
  constructor(key: string, cacheFile: string) {
    super(
      "model.cache-miss",
      `no cached model call with key ${key.slice(0, 16)}… (cache mode "replay-only" never calls a model; record the run first with mode "use" or "refresh")`,
      { file: cacheFile },
      { data: { key } },
    );
  }
}
