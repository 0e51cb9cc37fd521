/**
 * Typed errors for skillsmith. One class per failure family; each carries a stable `code`,
 * whether retrying could help, structured `data` and an optional `cause`.
 *
 * The CLI maps families to exit codes: user mistakes (usage, input) exit 2 with a message and
 * no stack trace; everything else is a bug or an environment failure and exits 1 or more.
 */
export interface ErrorOptions {
  readonly cause?: unknown;
  readonly data?: Readonly<Record<string, unknown>>;
  readonly retryable?: boolean;
}

export abstract class SkillsmithError extends Error {
  abstract readonly family:
    | "usage"
    | "input"
    | "infrastructure"
    | "agent"
    | "internal"
    | "unsupported";
  readonly code: string;
  readonly retryable: boolean;
  readonly data: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.data = options.data ?? {};
  }
}

/** The command line was wrong: unknown flag, missing argument, bad value. Exit code 2. */
export class UsageError extends SkillsmithError {
  readonly family = "usage" as const;
}

/** Where in a user's file a problem was found. */
export interface InputLocation {
  readonly file?: string;
  readonly line?: number;
  readonly field?: string;
}

/**
 * A user's input (file, flag value, data) cannot be used. Exit code 2. The message names the
 * file, field and line when known, and says what was expected.
 */
export class InputError extends SkillsmithError {
  readonly family = "input" as const;
  readonly location: InputLocation;

  constructor(
    code: string,
    message: string,
    location: InputLocation = {},
    options: ErrorOptions = {},
  ) {
    super(code, formatLocated(message, location), {
      ...options,
      data: { ...options.data, ...location },
    });
    this.location = location;
  }
}

/** Something outside our control failed (network, endpoint, container engine, disk). */
export class InfrastructureError extends SkillsmithError {
  readonly family = "infrastructure" as const;
}

/** An optional capability is not implemented by this backend. */
export class UnsupportedError extends SkillsmithError {
  readonly family = "unsupported" as const;
}

/** A broken invariant inside skillsmith: a bug. */
export class InternalError extends SkillsmithError {
  readonly family = "internal" as const;
}

export function formatLocated(message: string, location: InputLocation): string {
  const where = [
    location.file,
    location.line === undefined ? undefined : `line ${location.line}`,
    location.field === undefined ? undefined : `field "${location.field}"`,
  ]
    .filter((part) => part !== undefined)
    .join(", ");
  return where === "" ? message : `${where}: ${message}`;
}

export function isSkillsmithError(value: unknown): value is SkillsmithError {
  return value instanceof SkillsmithError;
}
