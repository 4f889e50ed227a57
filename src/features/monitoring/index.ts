// Monitoring: Prometheus metrics, liveness and readiness (what other parts may use).
export { monitoringRoutes, startMetricsListener } from "./routes";
export { checkReadiness, gatherBeforeScrape, scrapeMetrics, startMonitoring, stopMonitoring, freeBytes } from "./service";
