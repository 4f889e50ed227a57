// The worker behind snapshotDatabase(): VACUUM INTO blocks its thread for as long as it copies
// (about 1.5 s per 500 MB), so a server taking a scheduled backup runs it here and keeps serving.
import { snapshotInline } from "./snapshot";

declare const self: Worker;

self.onmessage = (e: MessageEvent<{ source: string; target: string }>) => {
  try {
    snapshotInline(e.data.source, e.data.target);
    self.postMessage({ ok: true });
  } catch (err) {
    self.postMessage({ ok: false, error: (err as Error).message });
  }
};
