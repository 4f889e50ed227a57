// The dashboard's scripts, embedded in the binary and served from the API origin so the page
// CSP can say `script-src 'self'` (no inline script, no CDN). URLs carry a content hash, so a
// browser may keep them for a year and still picks up a new binary's script at once.
import { Elysia } from "elysia";
import { siteAssets } from "../../sites-assets.gen";

const PREFIX = "dashboard/assets/";
const types: Record<string, string> = { js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" };

interface Asset {
  bytes: ArrayBuffer;
  hash: string;
  type: string;
}

const assets = new Map<string, Asset>();

async function load(name: string): Promise<Asset | null> {
  const known = assets.get(name);
  if (known) return known;
  const path = siteAssets[PREFIX + name];
  const type = types[name.split(".").pop() ?? ""];
  if (!path || !type || name.includes("/")) return null;
  const bytes = await Bun.file(path).arrayBuffer();
  const asset = { bytes, hash: new Bun.CryptoHasher("sha256").update(bytes).digest("hex").slice(0, 16), type };
  assets.set(name, asset);
  return asset;
}

/** `<script>` tags for the named scripts (sites/dashboard/assets/<name>), with cache-busting hashes. */
export async function scriptTags(names: string[]): Promise<string> {
  const tags: string[] = [];
  for (const name of names) {
    const asset = await load(name);
    if (!asset) throw new Error(`dashboard script ${name} is not embedded (run scripts/gen-embeds.ts)`);
    tags.push(`<script src="/dashboard/assets/${name}?v=${asset.hash}" defer></script>`);
  }
  return tags.join("\n");
}

export const dashboardAssetRoutes = () =>
  new Elysia({ name: "dashboard-assets" }).get(
    "/dashboard/assets/:name",
    async ({ params, query }) => {
      const asset = await load(params.name);
      if (!asset) return new Response("Not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
      const current = query.v === asset.hash;
      return new Response(asset.bytes, {
        headers: {
          "content-type": asset.type,
          "cache-control": current ? "public, max-age=31536000, immutable" : "no-cache",
          "x-content-type-options": "nosniff",
        },
      });
    },
    { detail: { hide: true } },
  );
