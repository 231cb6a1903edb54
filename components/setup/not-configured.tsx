/** Shown when no Prometheus is configured: how to connect one, not an error. */
export function NotConfigured({ configSource, problem }: { configSource: string; problem?: string }) {
  return (
    <main className="mx-auto max-w-3xl p-6" data-testid="not-configured">
      <h1 className="mb-2 text-xl font-semibold">Connect Churnscope to Prometheus</h1>
      {problem && (
        <p role="alert" className="mb-3 rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]">
          {problem}
        </p>
      )}
      <p className="mb-4 text-sm text-[var(--muted)]">
        Churnscope charts API-server write load from Prometheus. No Prometheus is configured yet
        {configSource === "defaults" ? " (no churnscope.yaml found, PROMETHEUS_URL not set)" : ` (${configSource} has no prometheus section)`}.
      </p>
      <ol className="list-decimal space-y-3 pl-5 text-sm">
        <li>
          Quickest: start with the URL of a Prometheus (or Thanos, Mimir, VictoriaMetrics) that scrapes your API servers:
          <pre className="mt-1 overflow-x-auto rounded bg-[var(--panel)] p-2 font-mono text-xs">PROMETHEUS_URL=http://prometheus.monitoring:9090 npm start</pre>
        </li>
        <li>
          For credentials, API-server roles and the site label, copy <code>churnscope.example.yaml</code> to <code>churnscope.yaml</code> (or point
          <code> CHURNSCOPE_CONFIG</code> at it), edit it, and restart.
        </li>
        <li>
          Churnscope needs <code>apiserver_request_total</code>; <code>etcd_requests_total</code> or <code>apiserver_watch_cache_events_received_total</code>{" "}
          add the no-op write estimate. The README lists every metric each panel uses.
        </li>
      </ol>
    </main>
  );
}
