export * from "./manifest.js";
export * from "./results.js";
