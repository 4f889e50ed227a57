/** The environment variable a serving worker is started with (its settings as JSON; src/serving-workers.ts). */
export const WORKER_ENV = "PIER_SERVING_WORKER";
