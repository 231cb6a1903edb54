/**
 * Write requests the API server answers without storing anything, by design: access and token reviews, and
 * TokenRequests (the service-account `token` subresource). Kubelets, metrics-server and authenticating proxies
 * (kube-rbac-proxy sends a review per scrape) send many; counted beside what was stored, they would read as no-ops.
 */
export const NEVER_STORED_RESOURCES = [
  "tokenreviews",
  "subjectaccessreviews",
  "selfsubjectaccessreviews",
  "localsubjectaccessreviews",
  "selfsubjectrulesreviews",
  "selfsubjectreviews",
] as const;

/** ServiceAccount TokenRequests: `create serviceaccounts/<name>/token`. */
export const NEVER_STORED_SUBRESOURCE = "token";
