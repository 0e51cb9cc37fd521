export * from "./excerpt.js";
export * from "./load.js";
export * from "./render.js";
export * from "./report.js";
