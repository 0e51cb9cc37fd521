/** Small DOM helpers for the report's browser scripts (bundled into each script that uses them). */

/** The element with this id; a missing one is a bug in the page the server or report wrote. */
export function byId(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the page has no element #${id}`);
  return element;
}

/** The JSON a `<script type="application/json" id="…">` element holds. */
export function jsonOf<T>(id: string): T {
  return JSON.parse(byId(id).textContent ?? "null") as T;
}

/** The first element matching `selector` (the report's fixed landmarks: header, main, footer). */
export function landmark(selector: string): HTMLElement {
  const element = document.querySelector<HTMLElement>(selector);
  if (element === null) throw new Error(`the page has no ${selector}`);
  return element;
}
