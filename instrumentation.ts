/**
 * Next.js calls register() once when the server starts: hand serve.cjs the panel answerer, and begin
 * recording if there is a cluster to record.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { getServerContext } = await import("./lib/server/context");
  const { ensureRecorder } = await import("./lib/server/recording");
  const { panelFastPath, registerFastPath } = await import("./lib/server/panel-fast-path");
  registerFastPath(panelFastPath(getServerContext));
  try {
    const { removeLeftUploads } = await import("./lib/server/handlers/audit");
    const removed = removeLeftUploads(getServerContext().config.dataDir);
    if (removed > 0) console.log(`churnscope: removed ${removed} audit upload${removed === 1 ? "" : "s"} a stop left half-written`);
  } catch (error) {
    console.error(`churnscope: could not look for half-written uploads: ${(error as Error).message}`);
  }
  try {
    ensureRecorder(getServerContext());
  } catch (error) {
    console.error(`churnscope: the recorder did not start: ${(error as Error).message}`);
  }
}
