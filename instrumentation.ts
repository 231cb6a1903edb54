/**
 * Next.js calls register() once when the server starts: hand serve.cjs the API pipeline, and start
 * the server (open the live store, begin recording if there is a cluster to record).
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { getServerContext } = await import("./lib/server/context");
  const { startServer } = await import("./lib/server/start");
  const { nodeApi, registerApiHandler } = await import("./lib/server/node-api");
  registerApiHandler(nodeApi(getServerContext));
  try {
    void startServer(getServerContext());
  } catch (error) {
    // An invalid configuration: every page and API answer says why.
    console.error(`churnscope: the server did not start: ${(error as Error).message}`);
  }
}
