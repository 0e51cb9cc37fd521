/**
 * Renders the report's charts after load and marks each container, so a reader (or a test) can
 * tell a chart that rendered from one that failed; a failure is written into the container, not
 * swallowed. `window.skillsmithRenderCharts` renders again (the live page swaps the report in).
 */
import { byId, jsonOf } from "./dom.js";

interface ChartData {
  readonly id: string;
  readonly spec: unknown;
}

window.skillsmithRenderCharts = () => {
  for (const chart of jsonOf<ChartData[]>("report-charts")) {
    const element = byId(chart.id);
    vegaEmbed(element, chart.spec, { actions: false, renderer: "svg" })
      .then(() => {
        element.setAttribute("data-rendered", "true");
      })
      .catch((error: unknown) => {
        element.setAttribute("data-rendered", "error");
        const message = document.createElement("p");
        message.className = "chart-error";
        message.textContent = `chart failed to render: ${String(error)}`;
        element.appendChild(message);
      });
  }
};
window.skillsmithRenderCharts();
