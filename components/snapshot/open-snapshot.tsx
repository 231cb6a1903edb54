"use client";
/**
 * "Open snapshot…": uploads a bundle (streamed, size-limited by the server) and opens it. While the
 * server is checking other uploads it says so, and tries again when the server asks it to.
 */
import { useEffect, useRef, useState } from "react";
import { formatBytes } from "@/lib/format/number";
import { ApiClientError, fetchEnvelope } from "@/lib/api/fetch-envelope";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";

/** Tries while the server is busy checking other uploads, then gives up and says so. */
const MAX_TRIES = 12;

export function OpenSnapshot() {
  const input = useRef<HTMLInputElement>(null);
  const [state, setState] = useState<{ busy: boolean; queued?: string; error?: string; file?: string }>({ busy: false });
  // Checking a bundle the replay's size takes a few seconds: the seconds go by on screen.
  const [seconds, setSeconds] = useState(0);
  useEffect(() => {
    if (!state.busy) return;
    setSeconds(0);
    const timer = setInterval(() => setSeconds((s) => s + 1), 1000);
    return () => clearInterval(timer);
  }, [state.busy]);

  const upload = async (file: File) => {
    const named = `${file.name} (${formatBytes(file.size)})`;
    setState({ busy: true, file: named });
    for (let attempt = 1; ; attempt++) {
      try {
        const info = await fetchEnvelope<SnapshotInfo>("/api/snapshots", undefined, {
          method: "POST",
          body: file,
          headers: { "Content-Type": "application/octet-stream" },
        });
        // Opens on the page it was downloaded from, else the first it holds.
        const page =
          info.data.initialView?.page ?? { "write-load": "/", rebuilds: "/rebuilds", compare: "/compare", objects: "/objects" }[info.data.views[0]] ?? "/";
        window.location.assign(`${page}?snapshot=${info.data.id}`);
        return;
      } catch (error) {
        const busy = error instanceof ApiClientError && error.errorType === "busy" && attempt < MAX_TRIES;
        if (!busy) return setState({ busy: false, error: error instanceof Error ? error.message : String(error) });
        const seconds = error.retryAfterSeconds ?? 10;
        setState({
          busy: true,
          file: named,
          queued: `Queued: ${error.message.replace(/; try again in \d+ s$/, "")}. Trying again in ${seconds} s (try ${attempt + 1} of ${MAX_TRIES}).`,
        });
        await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      }
    }
  };

  return (
    <span className="flex items-center gap-2 text-sm">
      <button
        type="button"
        className="rounded border border-[var(--border)] px-2 py-1 hover:bg-[var(--bg)]"
        onClick={() => input.current?.click()}
        disabled={state.busy}
      >
        {state.busy ? "Opening…" : "Open snapshot…"}
      </button>
      <input
        ref={input}
        type="file"
        accept=".gz,.json,application/gzip,application/json"
        className="hidden"
        data-testid="snapshot-file"
        onChange={(e) => {
          const file = e.target.files?.[0];
          if (file) void upload(file);
          e.target.value = "";
        }}
      />
      {state.busy && !state.queued && (
        <span role="status" data-testid="snapshot-opening" className="text-xs text-[var(--muted)]">
          Checking {state.file}: {seconds} s
        </span>
      )}
      {state.queued && !state.error && (
        <span role="status" data-testid="snapshot-queued" className="rounded bg-[var(--bg)] px-2 py-1 text-xs text-[var(--muted)]">
          {state.queued}
        </span>
      )}
      {state.error && (
        <span role="alert" data-testid="snapshot-error" className="rounded bg-[var(--err-bg)] px-2 py-1 text-xs text-[var(--err-fg)]">
          Not opened: {state.error}
        </span>
      )}
    </span>
  );
}
