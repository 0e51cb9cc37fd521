/**
 * Typed errors for skillsmith. One class per failure family; each carries a stable `code`,
 * whether retrying could help, structured `data` and an optional `cause`.
 *
 * The CLI maps families to exit codes: user mistakes (usage, input) exit 2 with a message and
 * no stack trace; everything else is a bug or an environment failure and exits 1 or more.
 */
/**
 * The modules an error code can belong to: the folders under src/, lowest layer first.
 * A code is `<module>.<kebab-name>` (`core.dependency-missing`, `wiki.url-timeout`): the module
 * that registered it, one dot, then lower-case words joined by hyphens.
 */
export const ERROR_CODE_MODULES = [
  "core",
  "skill",
  "stats",
  "model",
  "env",
  "agents",
  "bench",
  "wiki",
  "synth",
  "report",
  "cli",
] as const;
export type ErrorCodeModule = (typeof ERROR_CODE_MODULES)[number];

/** The convention every registered code follows (checked by `error-codes.test.ts`). */
export const ERROR_CODE_PATTERN: RegExp = new RegExp(
  `^(?:${ERROR_CODE_MODULES.join("|")})\\.[a-z0-9]+(?:-[a-z0-9]+)*$`,
);

/**
 * Every registered error code. Each module's `error-codes.ts` adds its own list to this
 * interface (declaration merging: `interface ErrorCodeRegistry extends Record<WikiErrorCode,
 * "wiki"> {}`), so an error cannot be constructed with a code no module registered: it does
 * not compile. Core cannot import the modules above it; merging lets them register downwards.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by each module's error-codes.ts
export interface ErrorCodeRegistry {}

/** A registered error code (see `ErrorCodeRegistry`). */
export type ErrorCode = keyof ErrorCodeRegistry & string;

export interface ErrorOptions {
  readonly cause?: unknown;
  readonly data?: Readonly<Record<string, unknown>>;
  readonly retryable?: boolean;
}

/**
 * Every skillsmith error carries this registered symbol (`Symbol.for`, so each copy of the
 * package finds the same one), plus one `skillsmith.error.<ClassName>` symbol per class of its
 * chain. `instanceof` fails across two copies of the package (a plugin bundling its own, two
 * versions in one `node_modules`); these markers do not. Check with `SkillsmithError.isInstance`
 * or `UsageError.isInstance` etc. (the pattern the Vercel AI SDK uses for its errors).
 */
const ERROR_MARKER: unique symbol = Symbol.for("skillsmith.error");

/** The marker of one error class, by its name: the same symbol in every copy of the package. */
function classMarker(name: string): symbol {
  return Symbol.for(`skillsmith.error.${name}`);
}

function hasMarker(value: unknown, marker: symbol): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Record<symbol, unknown>)[marker] === true
  );
}

export abstract class SkillsmithError extends Error {
  /** Set on every skillsmith error by every copy of the package; see `isInstance`. */
  declare readonly [ERROR_MARKER]: true;

  /**
   * Whether `value` is an error of this class or a subclass, made by any copy of skillsmith:
   * `SkillsmithError.isInstance(e)` for any skillsmith error, `InputError.isInstance(e)` for
   * input errors (including subclasses such as `CacheMissError`), and so on. Prefer it to
   * `instanceof`, which only recognises errors of the very copy it was imported from.
   */
  static isInstance<Class extends abstract new (...args: never[]) => SkillsmithError>(
    this: Class,
    value: unknown,
  ): value is InstanceType<Class> {
    return hasMarker(
      value,
      (this as unknown) === SkillsmithError ? ERROR_MARKER : classMarker(this.name),
    );
  }

  abstract readonly family:
    | "usage"
    | "input"
    | "infrastructure"
    | "agent"
    | "internal"
    | "unsupported";
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly data: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    Object.defineProperty(this, ERROR_MARKER, { value: true, enumerable: false });
    // One marker per class of the chain, below SkillsmithError itself (which has ERROR_MARKER):
    // class names, because they are what two copies of the package have in common.
    for (
      let prototype: object | null = new.target.prototype;
      prototype !== null && prototype !== SkillsmithError.prototype;
      prototype = Object.getPrototypeOf(prototype)
    ) {
      const name = (prototype as { constructor: { name: string } }).constructor.name;
      Object.defineProperty(this, classMarker(name), { value: true, enumerable: false });
    }
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
  readonly file?: string | undefined;
  readonly line?: number | undefined;
  readonly field?: string | undefined;
}

/**
 * A user's input (file, flag value, data) cannot be used. Exit code 2. The message names the
 * file, field and line when known, and says what was expected.
 */
export class InputError extends SkillsmithError {
  readonly family = "input" as const;
  readonly location: InputLocation;

  constructor(
    code: ErrorCode,
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

/**
 * Whether `value` is a skillsmith error from any copy of the package (see `ERROR_MARKER`),
 * optionally of one family (`"usage"`, `"input"`, …).
 */
export function isSkillsmithError(
  value: unknown,
  family?: SkillsmithError["family"],
): value is SkillsmithError {
  return (
    SkillsmithError.isInstance(value) &&
    (family === undefined || (value as SkillsmithError).family === family)
  );
}
