export * from "./connection.js";
export * from "./coordinator.js";
export * from "./jobs.js";
export { type QueueWorkerOptions, type QueueWorkerSummary, runQueueWorker } from "./worker.js";
