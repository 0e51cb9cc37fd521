/**
 * The dashboard's report page: polls the store's version and, when it changed, fetches the page
 * again and swaps in the new header and report (the server escaped every run text in it;
 * DOMParser runs no scripts), then renders the charts again. Scroll position is kept.
 */
import { byId, httpError, jsonOf, landmark } from "./dom.js";

interface LiveConfig {
  readonly stateUrl: string;
  readonly version: string;
  readonly intervalMs?: number;
}

interface StoreState {
  readonly version: string;
  readonly scored: number;
}

const config = jsonOf<LiveConfig>("report-live");
let version = config.version;
let status = document.getElementById("live-status");
let busy = false;

function stamp(text: string): void {
  if (status) status.textContent = text;
}

async function fetchOk(url: string): Promise<Response> {
  const response = await fetch(url, { cache: "no-store", credentials: "same-origin" });
  if (!response.ok) throw httpError(response);
  return response;
}

async function refresh(): Promise<void> {
  const state = (await (await fetchOk(config.stateUrl)).json()) as StoreState;
  if (state.version === version) {
    stamp(`live · ${state.scored} runs stored · checked ${new Date().toLocaleTimeString()}`);
    return;
  }
  const text = await (await fetchOk(location.pathname + location.search)).text();
  const next = new DOMParser().parseFromString(text, "text/html");
  const nextMain = next.querySelector("main");
  const nextLive = next.getElementById("report-live");
  const nextHeader = next.querySelector("header");
  if (!nextMain || !nextLive || !nextHeader) {
    location.reload();
    return;
  }
  landmark("header").replaceWith(document.adoptNode(nextHeader));
  landmark("main").replaceWith(document.adoptNode(nextMain));
  byId("report-charts").textContent = next.getElementById("report-charts")?.textContent ?? "[]";
  version = (JSON.parse(nextLive.textContent ?? "{}") as LiveConfig).version;
  document.body.setAttribute("data-version", version);
  status = document.getElementById("live-status");
  window.skillsmithRenderCharts();
  stamp(`live · ${state.scored} runs stored · updated ${new Date().toLocaleTimeString()}`);
}

function poll(): void {
  if (busy) return;
  busy = true;
  refresh()
    .catch((error: unknown) => {
      stamp(`live updates paused: ${error instanceof Error ? error.message : String(error)}`);
    })
    .then(() => {
      busy = false;
    });
}

setInterval(poll, config.intervalMs || 1000);
