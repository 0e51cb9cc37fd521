/**
 * Two-stage search over a small hand-written wiki: the BM25 shortlist (verified-only by
 * default), the model's selection (scripted server over real HTTP) checked against the
 * shortlist, and the comparison strategies.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UnsupportedError } from "../src/core/errors.js";
import { ModelClient } from "../src/model/client.js";
import { type ScriptedServer, startScriptedServer } from "../src/model/scripted/server.js";
import { searchSkills, WikiSearch } from "../src/wiki/search.js";
import { handSkillId, handSkills, writeHandWiki } from "./support/wiki.js";

let root: string;
let search: WikiSearch;
const servers: ScriptedServer[] = [];
const idOf = (name: string) => {
  const found = handSkills.find((each) => each.name === name);
  if (found === undefined) throw new Error(name);
  return handSkillId(found);
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "skillsmith-wiki-search-"));
  await writeHandWiki(root);
  search = await WikiSearch.open(root);
});
afterAll(async () => {
  for (const server of servers) await server.close();
  await rm(root, { recursive: true, force: true });
});

async function selector(text: string): Promise<{ model: ModelClient; server: ScriptedServer }> {
  const server = await startScriptedServer({ script: { fallback: { text } } });
  servers.push(server);
  const model = new ModelClient({
    spec: "openai:gpt-5-mini",
    env: { OPENAI_API_KEY: "test", OPENAI_BASE_URL: `${server.url}/v1` },
    cwd: root,
  });
  return { model, server };
}

describe("stage 1: BM25 shortlist", () => {
  it("puts the only card about centering with grid first", async () => {
    const result = await searchSkills(search, "center a div with css grid");
    expect(result.shortlist[0]?.card.skill_id).toBe(idOf("Center with CSS grid"));
    expect(result.selected.map((pick) => pick.card.skill_name)[0]).toBe("Center with CSS grid");
  });

  it("is verified-only by default and finds reference-only entries on request", async () => {
    const hidden = await searchSkills(search, "float clearfix");
    expect(hidden.shortlist).toEqual([]);
    const shown = await searchSkills(search, "float clearfix", { includeUnverified: true });
    expect(shown.shortlist.map((hit) => hit.card.skill_name)).toEqual(["Legacy float layout"]);
  });

  it("indexes the category path and searches one domain when asked", async () => {
    const byCategory = await searchSkills(search, "navigation components");
    expect(byCategory.shortlist[0]?.card.skill_name).toBe("Responsive flexbox navigation bar");
    const dataOnly = await WikiSearch.open(root, "data");
    expect(dataOnly.entries.map((entry) => entry.meta.skill_name)).toEqual(["Parse CSV rows"]);
  });
});

describe("stage 2: model selection", () => {
  it("keeps the model's picks that are in the shortlist, with one-line reasons, and drops invented ids", async () => {
    const grid = idOf("Center with CSS grid");
    const { model, server } = await selector(
      JSON.stringify({
        selections: [
          { skill_id: grid, reason: "Centers the box.\nSecond line is dropped." },
          { skill_id: "f".repeat(40), reason: "not in the shortlist" },
          { skill_id: grid, reason: "duplicate" },
        ],
      }),
    );
    const result = await searchSkills(search, "center layout grid", { strategy: "select", model });
    expect(result.selected.map((pick) => [pick.card.skill_id, pick.reason])).toEqual([
      [grid, "Centers the box."],
    ]);
    expect(result.rejected_ids).toEqual(["f".repeat(40)]);
    // The model saw the cards of the shortlist, and only them.
    const prompt = server.requests[0]?.lastUserMessage ?? "";
    for (const hit of result.shortlist) expect(prompt).toContain(hit.card.skill_id);
    expect(prompt).not.toContain(idOf("Legacy float layout"));
    expect(server.requests[0]?.system).toContain("at most 5");
  });

  it("allows zero picks and caps the picks at the maximum", async () => {
    const none = await selector(JSON.stringify({ selections: [] }));
    expect(
      (await searchSkills(search, "grid layout", { strategy: "select", model: none.model }))
        .selected,
    ).toEqual([]);
    const ids = [idOf("Center with CSS grid"), idOf("Responsive flexbox navigation bar")];
    const two = await selector(
      JSON.stringify({ selections: ids.map((id) => ({ skill_id: id, reason: "fits" })) }),
    );
    const capped = await searchSkills(search, "layout grid navigation flexbox", {
      strategy: "select",
      model: two.model,
      max: 1,
    });
    expect(capped.selected.map((pick) => pick.card.skill_id)).toEqual([ids[0]]);
  });

  it("offers the comparison strategies: none, seeded random over verified entries, no embedding without a model", async () => {
    expect((await searchSkills(search, "grid", { strategy: "none" })).selected).toEqual([]);
    const first = await searchSkills(search, "grid", { strategy: "random", seed: 11, max: 2 });
    const again = await searchSkills(search, "grid", { strategy: "random", seed: 11, max: 2 });
    expect(first.selected.map((pick) => pick.card.skill_id)).toEqual(
      again.selected.map((pick) => pick.card.skill_id),
    );
    expect(first.selected).toHaveLength(2);
    for (const pick of first.selected) expect(pick.card.validation_status).toBe("verified");
    await expect(searchSkills(search, "grid", { strategy: "embedding" })).rejects.toBeInstanceOf(
      UnsupportedError,
    );
  });
});
