export * from "./predictions.js";
export * from "./progress.js";
export * from "./quickstart.js";
export * from "./reward.js";
export * from "./runner.js";
export * from "./task-check.js";
export * from "./task-environment.js";
export * from "./verifier.js";
