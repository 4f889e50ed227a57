// Storage uploads may take as long as the bytes keep coming (gigabytes over a slow link), so
// they are not held to the body deadline; a client that stops sending is cut off instead after
// the same number of seconds without a byte. Bun's own idle timer cannot do this: it does not
// see body bytes arriving and would cut every upload longer than its idleTimeout.
import type { Server } from "bun";
import { ApiError } from "../core/errors";

/** The request with its body read through a stall timer; the caller's size checks still apply. */
export function guardStalls(req: Request, server: Server<unknown>, stallSeconds: number): Request {
  if (req.body === null) return req;
  const reader = req.body.getReader();
  let reading = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Bun's idle timer is switched off only once the route reads the body (its token checked):
      // a refused upload keeps the ordinary timer and cannot hold its connection open.
      if (!reading) {
        reading = true;
        server.timeout(req, 0);
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<"stalled">((resolve) => (timer = setTimeout(() => resolve("stalled"), stallSeconds * 1000)));
      try {
        const next = await Promise.race([reader.read(), stalled]);
        if (next === "stalled") {
          // Hand the connection back to Bun's idle timer so the silent client is disconnected.
          server.timeout(req, 1);
          void reader.cancel().catch(() => {});
          controller.error(new ApiError("BODY_TIMEOUT", `No upload bytes arrived for ${stallSeconds} seconds.`, { timeout_seconds: stallSeconds }));
        } else if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (e) {
        controller.error(e);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Request(req, { body, duplex: "half" } as RequestInit);
}
