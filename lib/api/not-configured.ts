import { ApiFailure } from "./envelope";

export const notConfigured = () =>
  new ApiFailure(503, "not_configured", "No Prometheus is configured. Set PROMETHEUS_URL or prometheus.url in churnscope.yaml (see docs/configuration.md).");
