/**
 * The slot library of the synthesis prompt: input slots (how to read the target and the
 * evidence) and output slots (how to write the skill), with their limits, atomic patches and a
 * readable diff. Limits are enforced on every library that is loaded or produced by a patch.
 */
import { z } from "zod";
import { InputError } from "../core/errors.js";
import { parseInput } from "../core/parse.js";
import { err, ok, type Result } from "../core/result.js";

export const maxSlotsPerCategory = 8;
export const maxSlotCharacters = 1_200;
export const maxSlotsPerPatch = 4;

export const slotCategories = ["input", "output"] as const;
export type SlotCategory = (typeof slotCategories)[number];

export interface Slot {
  readonly id: string;
  readonly text: string;
}

export interface SlotLibrary {
  readonly version: string;
  readonly input: readonly Slot[];
  readonly output: readonly Slot[];
}

const slotIdPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const slotSchema = z.strictObject({ id: z.string(), text: z.string() });
export const slotLibrarySchema = z.strictObject({
  version: z.string().min(1),
  input: z.array(slotSchema),
  output: z.array(slotSchema),
});

/** Every way a library can break the limits, as readable messages (empty when it is fine). */
export function slotLibraryProblems(library: SlotLibrary): string[] {
  const problems: string[] = [];
  for (const category of slotCategories) {
    const slots = library[category];
    if (slots.length > maxSlotsPerCategory)
      problems.push(
        `${category} slots: ${slots.length} slots, at most ${maxSlotsPerCategory} are allowed`,
      );
    const seen = new Set<string>();
    for (const slot of slots) {
      if (!slotIdPattern.test(slot.id))
        problems.push(
          `${category} slot "${slot.id}": the id must be lowercase letters, digits and single hyphens`,
        );
      if (seen.has(slot.id)) problems.push(`${category} slot "${slot.id}": duplicate id`);
      seen.add(slot.id);
      if (slot.text.trim() === "") problems.push(`${category} slot "${slot.id}": empty text`);
      if (slot.text.length > maxSlotCharacters)
        problems.push(
          `${category} slot "${slot.id}": ${slot.text.length} characters, at most ${maxSlotCharacters} are allowed`,
        );
    }
  }
  return problems;
}

/** Parse and check a library from untrusted JSON; `source` names the file in the error. */
export function parseSlotLibrary(value: unknown, source: string): SlotLibrary {
  const library = parseInput(slotLibrarySchema, value, {
    code: "synth.library-invalid",
    location: { file: source },
    describe: (problem) =>
      `${problem.message} (a slot library has "version", "input" and "output" arrays of {id, text})`,
  });
  const problems = slotLibraryProblems(library);
  if (problems.length > 0)
    throw new InputError("synth.library-limits", `slot limits broken: ${problems.join("; ")}`, {
      file: source,
    });
  return library;
}

const categorySchema = z.enum(slotCategories);
export const slotOperationSchema = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("add"),
    category: categorySchema,
    id: z.string(),
    text: z.string(),
    position: z.number().int().nonnegative().optional(),
  }),
  z.strictObject({
    op: z.literal("replace"),
    category: categorySchema,
    id: z.string(),
    text: z.string(),
  }),
  z.strictObject({ op: z.literal("delete"), category: categorySchema, id: z.string() }),
  z.strictObject({
    op: z.literal("move"),
    category: categorySchema,
    id: z.string(),
    position: z.number().int().nonnegative(),
  }),
]);
export type SlotOperation = z.infer<typeof slotOperationSchema>;

export const slotPatchSchema = z.strictObject({
  rationale: z.string(),
  operations: z.array(slotOperationSchema).min(1),
});
export type SlotPatch = z.infer<typeof slotPatchSchema>;

/** The distinct slots a patch touches, as `category/id`. */
export function touchedSlots(operations: readonly SlotOperation[]): string[] {
  return [...new Set(operations.map((operation) => `${operation.category}/${operation.id}`))];
}

/**
 * Apply a patch to a library, producing the next version, or say why it is rejected: more than
 * `maxSlotsPerPatch` slots touched, an operation on a missing slot, an add of an existing id,
 * or a result that breaks the slot limits.
 */
export function applySlotPatch(
  library: SlotLibrary,
  operations: readonly SlotOperation[],
  nextVersion: string,
): Result<SlotLibrary, string> {
  const touched = touchedSlots(operations);
  if (touched.length > maxSlotsPerPatch)
    return err(
      `the patch touches ${touched.length} slots (${touched.join(", ")}); at most ${maxSlotsPerPatch} are allowed`,
    );
  const working: Record<SlotCategory, Slot[]> = {
    input: [...library.input],
    output: [...library.output],
  };
  for (const [index, operation] of operations.entries()) {
    const slots = working[operation.category];
    const at = slots.findIndex((slot) => slot.id === operation.id);
    const where = `operation ${index + 1} (${operation.op} ${operation.category}/${operation.id})`;
    switch (operation.op) {
      case "add":
        if (at >= 0) return err(`${where}: the slot already exists`);
        slots.splice(
          Math.min(operation.position ?? slots.length, slots.length),
          0,
          Object.freeze({ id: operation.id, text: operation.text }),
        );
        break;
      case "replace":
        if (at < 0) return err(`${where}: no such slot`);
        slots[at] = Object.freeze({ id: operation.id, text: operation.text });
        break;
      case "delete":
        if (at < 0) return err(`${where}: no such slot`);
        slots.splice(at, 1);
        break;
      case "move": {
        if (at < 0) return err(`${where}: no such slot`);
        const [slot] = slots.splice(at, 1);
        if (slot !== undefined) slots.splice(Math.min(operation.position, slots.length), 0, slot);
        break;
      }
    }
  }
  const next: SlotLibrary = { version: nextVersion, input: working.input, output: working.output };
  const problems = slotLibraryProblems(next);
  if (problems.length > 0)
    return err(`the patched library breaks the slot limits: ${problems.join("; ")}`);
  return ok(next);
}

/** A readable, line-oriented diff of two libraries: `-`/`+` per changed slot, `~` for a move. */
export function diffSlotLibraries(before: SlotLibrary, after: SlotLibrary): string {
  const lines: string[] = [`--- ${before.version}`, `+++ ${after.version}`];
  for (const category of slotCategories) {
    const old = new Map(before[category].map((slot, index) => [slot.id, { slot, index }]));
    const next = new Map(after[category].map((slot, index) => [slot.id, { slot, index }]));
    for (const [id, { slot }] of old) {
      const replacement = next.get(id);
      if (replacement === undefined) lines.push(`- [${category}/${id}] ${slot.text}`);
      else if (replacement.slot.text !== slot.text) {
        lines.push(`- [${category}/${id}] ${slot.text}`);
        lines.push(`+ [${category}/${id}] ${replacement.slot.text}`);
      }
    }
    for (const [id, { slot }] of next)
      if (!old.has(id)) lines.push(`+ [${category}/${id}] ${slot.text}`);
    const keptOld = before[category].filter((slot) => next.has(slot.id)).map((slot) => slot.id);
    const keptNew = after[category].filter((slot) => old.has(slot.id)).map((slot) => slot.id);
    if (keptOld.join("\n") !== keptNew.join("\n"))
      lines.push(`~ [${category}] order ${keptOld.join(", ")} -> ${keptNew.join(", ")}`);
  }
  return lines.length === 2 ? `${lines.join("\n")}\n(no change)` : lines.join("\n");
}

/** The library as the numbered list shown in the synthesis, critic and editor prompts. */
export function renderSlots(slots: readonly Slot[]): string {
  if (slots.length === 0) return "(none)";
  return slots.map((slot, index) => `${index + 1}. [${slot.id}] ${slot.text}`).join("\n");
}

export function renderLibrary(library: SlotLibrary): string {
  return `Input slots:\n${renderSlots(library.input)}\n\nOutput slots:\n${renderSlots(library.output)}`;
}
