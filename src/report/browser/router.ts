/**
 * The static report's router: `#pair/<path>` shows the embedded pair in place of the report, any
 * other hash shows the report again, so the links work from a file:// URL with no server.
 */
import type { PairView } from "../pairs.js";
import { byId, jsonOf, landmark } from "./dom.js";

const byPairId = new Map<string, PairView>();
for (const pair of jsonOf<PairView[]>("report-pairs")) byPairId.set(pair.id, pair);
const main = landmark("main");
const header = landmark("header");
const footer = landmark("footer");
const viewer = byId("pair-viewer");
let lastReportScroll = 0;

function route(): void {
  const hash = location.hash;
  if (hash.indexOf("#pair/") === 0) {
    if (viewer.hidden) lastReportScroll = window.scrollY;
    const id = hash.slice(6);
    const pair = byPairId.get(id);
    if (pair) window.skillsmithViewer.render(viewer, pair, "#profiles");
    else window.skillsmithViewer.missing(viewer, id, "#profiles");
    main.hidden = true;
    header.hidden = true;
    footer.hidden = true;
    viewer.hidden = false;
    window.scrollTo(0, 0);
  } else if (viewer.hidden === false) {
    viewer.hidden = true;
    main.hidden = false;
    header.hidden = false;
    footer.hidden = false;
    if (hash === "#profiles") window.scrollTo(0, lastReportScroll);
  }
}

window.addEventListener("hashchange", route);
route();
