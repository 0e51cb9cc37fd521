/**
 * What the report's browser scripts share through `window`: each script is bundled on its own
 * (one `<script>` each), so the viewer and the chart renderer are reached as globals.
 */
import type { PairView } from "../pairs.js";

export interface SkillsmithViewer {
  render(container: HTMLElement, pair: PairView, backHref: string): void;
  missing(container: HTMLElement, id: string, backHref: string): void;
}

declare global {
  interface Window {
    skillsmithViewer: SkillsmithViewer;
    skillsmithRenderCharts: () => void;
  }
  /** vega-embed's entry point, inlined by the report before the chart script. */
  function vegaEmbed(
    element: HTMLElement,
    spec: unknown,
    options: { actions: boolean; renderer: "svg" | "canvas" },
  ): Promise<unknown>;
}
