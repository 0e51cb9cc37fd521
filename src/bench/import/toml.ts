import { parse, TomlError } from "smol-toml";

/**
 * TOML for Harbor `task.toml` files, through `smol-toml` (a spec-compliant, maintained parser).
 * This wrapper only narrows the value type and turns the parser's error into one that carries
 * the line, so importers can report `task.toml, line N`.
 */
export type TomlValue = string | number | boolean | TomlValue[] | TomlTable;
export interface TomlTable {
  [key: string]: TomlValue;
}

export class TomlSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
    this.name = "TomlSyntaxError";
  }
}

/** Dates and times become their ISO text, so every value is plain JSON-like data. */
function plain(value: unknown): TomlValue {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === "bigint") return Number(value);
  if (value !== null && typeof value === "object") {
    const table: TomlTable = {};
    for (const [key, item] of Object.entries(value)) table[key] = plain(item);
    return table;
  }
  return value as string | number | boolean;
}

export function parseToml(text: string): TomlTable {
  try {
    return plain(parse(text)) as TomlTable;
  } catch (error) {
    if (error instanceof TomlError) {
      throw new TomlSyntaxError(error.message.split("\n")[0] ?? "invalid TOML", error.line);
    }
    throw error;
  }
}
