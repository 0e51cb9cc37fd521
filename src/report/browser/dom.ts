/** Small DOM helpers for the report's browser scripts (bundled into each script that uses them). */
import { InfrastructureError, InternalError } from "../../core/errors.js";

/** The element with this id; a missing one is a bug in the page the server or report wrote. */
export function byId(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (element === null)
    throw new InternalError("report.page-element", `the page has no element #${id}`);
  return element;
}

/** The JSON a `<script type="application/json" id="…">` element holds. */
export function jsonOf<T>(id: string): T {
  return JSON.parse(byId(id).textContent ?? "null") as T;
}

/** The first element matching `selector` (the report's fixed landmarks: header, main, footer). */
export function landmark(selector: string): HTMLElement {
  const element = document.querySelector<HTMLElement>(selector);
  if (element === null)
    throw new InternalError("report.page-element", `the page has no ${selector}`);
  return element;
}

/** The error of an answer of the report's own server that is not 2xx (the page says so). */
export function httpError(response: Response): InfrastructureError {
  return new InfrastructureError("report.page-http", `HTTP ${response.status}`, {
    retryable: response.status >= 500,
    data: { status: response.status, url: response.url },
  });
}
