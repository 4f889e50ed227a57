// Storage uploads may take as long as the bytes keep coming (gigabytes over a slow link), so
// they are not held to the body deadline; a client that stops sending is cut off instead after
// the same number of seconds without a byte. Bun's own idle timer cannot do this: it does not
// see body bytes arriving and would cut every upload longer than its idleTimeout.
// One watchdog interval per upload notes the time of the last chunk: a timer and a promise race
// per chunk cost ~5% of a 1 GiB PUT's throughput and ~45 MiB of peak RSS (bench/README.md).
import type { Server } from "bun";
import { ApiError } from "../core/errors";

/** The request with its body read under a stall watchdog; the caller's size checks still apply. */
export function guardStalls(req: Request, server: Server<unknown>, stallSeconds: number): Request {
  if (req.body === null) return req;
  const reader = req.body.getReader();
  const stallMs = stallSeconds * 1000;
  let lastByteAt = 0; // 0 until the route first reads the body
  let stalled = false;
  let watchdog: ReturnType<typeof setInterval> | undefined;
  const stopWatching = () => {
    clearInterval(watchdog);
    watchdog = undefined;
  };
  const stallError = () => new ApiError("BODY_TIMEOUT", `No upload bytes arrived for ${stallSeconds} seconds.`, { timeout_seconds: stallSeconds });
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Bun's idle timer is switched off only once the route reads the body (its token checked):
      // a refused upload keeps the ordinary timer and cannot hold its connection open.
      if (lastByteAt === 0) {
        server.timeout(req, 0);
        lastByteAt = performance.now();
        watchdog = setInterval(
          () => {
            if (performance.now() - lastByteAt < stallMs) return;
            stalled = true;
            stopWatching();
            // Hand the connection back to Bun's idle timer so the silent client is disconnected;
            // cancelling the reader ends the pending read.
            server.timeout(req, 1);
            void reader.cancel().catch(() => {});
          },
          Math.min(1000, stallMs / 4),
        );
      }
      try {
        const next = await reader.read();
        if (stalled) controller.error(stallError());
        else if (next.done) {
          stopWatching();
          controller.close();
        } else {
          lastByteAt = performance.now();
          controller.enqueue(next.value);
        }
      } catch (e) {
        stopWatching();
        controller.error(stalled ? stallError() : e);
      }
    },
    cancel(reason) {
      stopWatching();
      return reader.cancel(reason);
    },
  });
  return new Request(req, { body, duplex: "half" } as RequestInit);
}
