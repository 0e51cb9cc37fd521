import { InputError } from "../core/errors.js";

/**
 * Check that `values` is a non-empty array of finite numbers. Every statistic in this module
 * calls this first, so a NaN from an upstream division never turns into a silent verdict.
 *
 * @param field names the argument in the error message (e.g. "deltas", "x").
 */
export function requireFiniteNumbers(values: unknown, field: string): readonly number[] {
  if (!Array.isArray(values)) {
    throw new InputError(
      "stats.not-an-array",
      `expected an array of numbers, got ${describe(values)}`,
      {
        field,
      },
    );
  }
  if (values.length === 0) {
    throw new InputError("stats.empty-input", "expected at least one number, got an empty array", {
      field,
    });
  }
  values.forEach((value: unknown, index: number) => {
    if (typeof value !== "number") {
      throw new InputError(
        "stats.not-a-number",
        `item ${index} is ${describe(value)}; expected a finite number`,
        { field },
        { data: { index } },
      );
    }
    if (!Number.isFinite(value)) {
      throw new InputError(
        "stats.non-finite",
        `item ${index} is ${String(value)}; expected a finite number`,
        { field },
        { data: { index } },
      );
    }
  });
  return values as readonly number[];
}

/** Paired samples must have the same length; correlations need at least one pair. */
export function requirePairedSamples(
  x: unknown,
  y: unknown,
): { readonly x: readonly number[]; readonly y: readonly number[] } {
  const left = requireFiniteNumbers(x, "x");
  const right = requireFiniteNumbers(y, "y");
  if (left.length !== right.length) {
    throw new InputError(
      "stats.length-mismatch",
      `x has ${left.length} values but y has ${right.length}; expected paired samples of equal length`,
      { field: "y" },
      { data: { xLength: left.length, yLength: right.length } },
    );
  }
  return { x: left, y: right };
}

/** A significance level or confidence level strictly between 0 and 1. */
export function requireOpenUnitInterval(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value >= 1) {
    throw new InputError(
      "stats.out-of-range",
      `${describe(value)} is not a number strictly between 0 and 1`,
      { field },
    );
  }
  return value;
}

/** A positive integer option such as a number of resamples. */
export function requirePositiveInteger(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new InputError("stats.out-of-range", `${describe(value)} is not a positive integer`, {
      field,
    });
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `${typeof value === "number" ? "" : `${typeof value} `}${String(value)}`;
}
