/**
 * Optional fields without `undefined`: under `exactOptionalPropertyTypes` an optional field may
 * be absent but not `undefined`, so an options object built from maybe-undefined values would
 * otherwise spread one `...(x === undefined ? {} : { x })` per field.
 */

/** `T` with each field that may be `undefined` made optional and never `undefined`. */
export type DefinedFields<T> = {
  [Key in keyof T as undefined extends T[Key] ? never : Key]: T[Key];
} & {
  [Key in keyof T as undefined extends T[Key] ? Key : never]?: Exclude<T[Key], undefined>;
};

/** `fields` without the ones whose value is `undefined` (null, 0, "" and false are kept). */
export function definedFields<T extends object>(fields: T): DefinedFields<T> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) kept[key] = value;
  return kept as DefinedFields<T>;
}
