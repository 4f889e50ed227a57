// Headless Chromium for page tests, driven by playwright-core: Debian's chromium-headless-shell
// (the same Chromium build in its headless-only form, Playwright's own default for headless; a
// browser context costs it about a third of the full browser's CPU, D320), else /usr/bin/chromium.
// scripts/test.sh installs it; a clear message says when neither is there. One Chromium per test
// process serves every file the process runs (starting one costs a second or more of a loaded
// machine, and about twenty files use it): each file gets a view of it whose close() closes the
// contexts that file opened, so no cookie, storage or open page outlives the file. Playwright
// ends the browser when the process exits.
import { existsSync } from "node:fs";
import { chromium, type Browser, type BrowserContext } from "playwright-core";

const HEADLESS_SHELL = "/usr/bin/chromium-headless-shell";
export const CHROMIUM = existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : "/usr/bin/chromium";

let shared: Promise<Browser> | null = null;

function start(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error("Chromium is missing: apt-get install -y chromium-headless-shell (scripts/test.sh does it)");
  return chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
}

/** The process's Chromium (started again if it went away), seen through a view that closes only what the caller opened. */
export async function launchChromium(): Promise<Browser> {
  shared ??= start();
  let browser = await shared.catch(() => null);
  if (!browser?.isConnected()) {
    shared = start();
    browser = await shared;
  }
  return ownContexts(browser);
}

function ownContexts(browser: Browser): Browser {
  const opened = new Set<BrowserContext>();
  const track = (c: BrowserContext) => {
    opened.add(c);
    c.once("close", () => opened.delete(c));
    return c;
  };
  return new Proxy(browser, {
    get(target, prop) {
      if (prop === "newContext") return async (...args: Parameters<Browser["newContext"]>) => track(await target.newContext(...args));
      if (prop === "newPage")
        return async (...args: Parameters<Browser["newPage"]>) => {
          const page = await target.newPage(...args);
          track(page.context());
          return page;
        };
      if (prop === "contexts") return () => [...opened];
      if (prop === "close") return async () => void (await Promise.allSettled([...opened].map((c) => c.close())));
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
