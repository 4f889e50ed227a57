// Monitoring: Prometheus metrics, liveness and readiness (what other parts may use).
export { monitoringRoutes, startMetricsListener } from "./routes";
export { checkReadiness, scrapeMetrics, startMonitoring, stopMonitoring, freeBytes } from "./service";
