/** Token accounting per role and relative cost (I + 2·O) / (I₀ + 2·O₀) against zero-shot. */

/**
 * Roles whose tokens are counted. `embedder` is the embedding model of embedding retrieval: input
 * tokens only. A Best-of-N self-check call is the solver checking itself and counts as `solver`.
 */
export const roles = ["solver", "synthesiser", "critic", "editor", "embedder"] as const;
export type Role = (typeof roles)[number];

export interface TokenCount {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly calls: number;
}

export type RoleUsage = Partial<Record<Role, TokenCount>>;

export function addTokens(
  usage: RoleUsage,
  role: Role,
  inputTokens: number,
  outputTokens: number,
  calls = 1,
): RoleUsage {
  const current = usage[role] ?? { inputTokens: 0, outputTokens: 0, calls: 0 };
  return {
    ...usage,
    [role]: {
      inputTokens: current.inputTokens + inputTokens,
      outputTokens: current.outputTokens + outputTokens,
      calls: current.calls + calls,
    },
  };
}

export function mergeUsage(...usages: readonly RoleUsage[]): RoleUsage {
  let result: RoleUsage = {};
  for (const usage of usages)
    for (const role of roles) {
      const count = usage[role];
      if (count === undefined) continue;
      const current = result[role] ?? { inputTokens: 0, outputTokens: 0, calls: 0 };
      result = {
        ...result,
        [role]: {
          inputTokens: current.inputTokens + count.inputTokens,
          outputTokens: current.outputTokens + count.outputTokens,
          calls: current.calls + count.calls,
        },
      };
    }
  return result;
}

export function totalTokens(usage: RoleUsage): { inputTokens: number; outputTokens: number } {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const role of roles) {
    inputTokens += usage[role]?.inputTokens ?? 0;
    outputTokens += usage[role]?.outputTokens ?? 0;
  }
  return { inputTokens, outputTokens };
}

/** Output tokens weigh twice: (I + 2·O) / (I₀ + 2·O₀); undefined when the baseline used none. */
export function relativeCost(usage: RoleUsage, zeroShot: RoleUsage): number | undefined {
  const own = totalTokens(usage);
  const base = totalTokens(zeroShot);
  const denominator = base.inputTokens + 2 * base.outputTokens;
  if (denominator === 0) return undefined;
  return (own.inputTokens + 2 * own.outputTokens) / denominator;
}

export interface CostRow {
  readonly label: string;
  readonly usage: RoleUsage;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly relativeCost: number | undefined;
  /**
   * Dollars at the model's list price (`src/model/prices.ts`, or the config's override) for the
   * model roles; embedding tokens are not priced. An estimate: cached input is priced as input.
   */
  readonly estimatedUsd?: number;
  /** The same estimate per role, each at the price of the model that role ran on. */
  readonly estimatedUsdByRole?: Partial<Record<Role, number>>;
}

/** A model's price per million input and output tokens. */
export interface TokenPrice {
  readonly input: number;
  readonly output: number;
}

/** A price per role, when the roles run on different models (a role without one is not priced). */
export type RolePrices = Partial<Record<Role, TokenPrice>>;

function priceOfRole(price: TokenPrice | RolePrices, role: Role): TokenPrice | undefined {
  if ("input" in price && typeof price.input === "number") return price as TokenPrice;
  return (price as RolePrices)[role];
}

/** Dollars per model role of `usage`, each at its own model's price (embedder left out). */
export function dollarsByRole(
  usage: RoleUsage,
  price: TokenPrice | RolePrices,
): Partial<Record<Role, number>> {
  const dollars: Partial<Record<Role, number>> = {};
  for (const role of roles) {
    if (role === "embedder") continue;
    const count = usage[role];
    const rolePrice = priceOfRole(price, role);
    if (count === undefined || rolePrice === undefined) continue;
    dollars[role] =
      (count.inputTokens * rolePrice.input + count.outputTokens * rolePrice.output) / 1_000_000;
  }
  return dollars;
}

/** Dollars for the model roles of `usage` at `price` (embedder left out: another model). */
export function estimatedDollars(usage: RoleUsage, price: TokenPrice | RolePrices): number {
  return Object.values(dollarsByRole(usage, price)).reduce((sum, each) => sum + each, 0);
}

export function costRow(
  label: string,
  usage: RoleUsage,
  zeroShot: RoleUsage,
  price?: TokenPrice | RolePrices,
): CostRow {
  return {
    label,
    usage,
    ...totalTokens(usage),
    relativeCost: relativeCost(usage, zeroShot),
    ...(price === undefined
      ? {}
      : {
          estimatedUsd: estimatedDollars(usage, price),
          estimatedUsdByRole: dollarsByRole(usage, price),
        }),
  };
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** A fixed-width table: one row per label, I/O per role, totals and relative cost. */
export function renderCostTable(rows: readonly CostRow[]): string[] {
  const priced = rows.some((row) => row.estimatedUsd !== undefined);
  const header = [
    "",
    ...roles.map((role) => `${role} I/O`),
    "total I/O",
    "rel. cost",
    ...(priced ? ["est. USD"] : []),
  ];
  const body = rows.map((row) => [
    row.label,
    ...roles.map((role) => {
      const count = row.usage[role];
      return count === undefined ? "-" : `${count.inputTokens}/${count.outputTokens}`;
    }),
    `${row.inputTokens}/${row.outputTokens}`,
    row.relativeCost === undefined ? "n/a" : `${row.relativeCost.toFixed(2)}x`,
    ...(priced ? [row.estimatedUsd === undefined ? "n/a" : `$${row.estimatedUsd.toFixed(4)}`] : []),
  ]);
  const widths = header.map((_, column) =>
    Math.max(...[header, ...body].map((cells) => (cells[column] ?? "").length)),
  );
  return [header, ...body].map((cells) =>
    cells.map((cell, column) => pad(cell, widths[column] ?? 0, column > 0)).join("  "),
  );
}
