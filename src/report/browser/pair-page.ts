/**
 * The dashboard's page of one pair: fetches the pair's JSON, renders it, and fetches it again
 * when the store changes (the with-skill run may land after the page was opened).
 */
import type { PairView } from "../pairs.js";
import { byId, httpError, jsonOf } from "./dom.js";

interface PairPageConfig {
  readonly id: string;
  readonly api: string;
  readonly stateUrl: string;
  readonly back: string;
}

const config = jsonOf<PairPageConfig>("pair-config");
const container = byId("pair-viewer");
let version: string | null = null;

async function load(): Promise<void> {
  const response = await fetch(config.api, { cache: "no-store", credentials: "same-origin" });
  if (response.status === 404) {
    window.skillsmithViewer.missing(container, config.id, config.back);
  } else {
    if (!response.ok) throw httpError(response);
    const body = (await response.json()) as { pair: PairView };
    const scroll = window.scrollY;
    window.skillsmithViewer.render(container, body.pair, config.back);
    window.scrollTo(0, scroll);
  }
  // Only a page that shows the pair (or says it has none) is loaded; a failure says so instead.
  container.setAttribute("data-loaded", "true");
}

function poll(): void {
  fetch(config.stateUrl, { cache: "no-store", credentials: "same-origin" })
    .then((response) => response.json() as Promise<{ version: string }>)
    .then((state) => {
      if (version === null) {
        version = state.version;
        return;
      }
      if (state.version !== version) {
        version = state.version;
        return load();
      }
    })
    // A missed poll is retried by the next one a second later.
    .catch(() => undefined);
}

load().catch((error: unknown) => {
  container.textContent = `could not load the pair: ${error instanceof Error ? error.message : String(error)}`;
});
setInterval(poll, 1000);
