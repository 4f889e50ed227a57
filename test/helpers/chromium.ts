// Headless Chromium for page tests: Debian's /usr/bin/chromium (scripts/test.sh installs it)
// driven by playwright-core, with a clear message when it is missing.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error("Chromium is missing: apt-get install -y chromium (scripts/test.sh does it)");
  return chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
}
