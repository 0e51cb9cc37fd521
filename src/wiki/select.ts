/**
 * Stage 2 of `wiki search`: a model picks at most n cards of the shortlist. Its own module so
 * that its schema (zod) loads only when a model is asked, never for a BM25-only query.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { packageRoot } from "../core/paths.js";
import type { ModelClient } from "../model/index.js";
import { execLabel } from "./cards.js";
import type { Selection, ShortlistHit } from "./search.js";

export const selectionSchema = z.object({
  selections: z.array(z.object({ skill_id: z.string(), reason: z.string() })),
});

async function selectorPrompt(max: number): Promise<string> {
  const text = await readFile(join(packageRoot(), "prompts", "wiki", "selector.md"), "utf8");
  return text.replaceAll("{{max}}", String(max));
}

export function renderCards(hits: readonly ShortlistHit[]): string {
  return hits
    .map(
      ({ card }) =>
        `skill_id: ${card.skill_id}\nname: ${card.skill_name}\ncategory: ${card.category_path.join(" / ")}\ntags: ${card.tags.join(", ")}\nwhen to use: ${card.applicability}\nmodalities: ${card.modalities.join(", ")}; exec_ok: ${String(card.exec_ok)} (${execLabel(card.exec_ok)})`,
    )
    .join("\n---\n");
}

/** Stage 2: the model picks at most `max` cards; its answer is checked against the shortlist. */
export async function selectFromShortlist(
  model: ModelClient,
  query: string,
  shortlist: readonly ShortlistHit[],
  max: number,
): Promise<{ selected: Selection[]; rejected_ids: string[] }> {
  if (shortlist.length === 0) return { selected: [], rejected_ids: [] };
  const result = await model.generateObject(selectionSchema, {
    role: "wiki-selector",
    system: await selectorPrompt(max),
    prompt: `Task: ${query}\n\nShortlist (${shortlist.length} skill cards):\n${renderCards(shortlist)}`,
    temperature: 0,
  });
  const byId = new Map(shortlist.map((hit) => [hit.card.skill_id, hit.card]));
  const selected: Selection[] = [];
  const rejected: string[] = [];
  for (const pick of result.object.selections) {
    const card = byId.get(pick.skill_id.trim());
    if (card === undefined) {
      rejected.push(pick.skill_id);
      continue;
    }
    if (selected.some((each) => each.card.skill_id === card.skill_id)) continue;
    if (selected.length >= max) break;
    selected.push({ card, reason: (pick.reason.split("\n")[0] ?? "").trim().slice(0, 240) });
  }
  return { selected, rejected_ids: rejected };
}
