export * from "./environments.js";
export * from "./predictions.js";
export * from "./progress.js";
export * from "./quickstart.js";
export * from "./runner.js";
export * from "./verifier.js";
