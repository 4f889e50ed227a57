// A query field a route declares single-valued, given more than once (`?range=7d&range=30d`), is
// refused: Elysia keeps the last value without a word, so a client that builds its query by
// appending would get an answer for a question it did not ask. Fields a route declares as arrays
// may repeat; routes without a query schema (pages, OAuth) are not checked here.
import { Elysia } from "elysia";
import { ApiError } from "../core/errors";

interface PropertySchema {
  type?: string | string[];
  anyOf?: PropertySchema[];
}

export interface QueryRouteTable {
  routes: Array<{ method: string; path: string; hooks?: Record<string, unknown> }>;
}

const takesSeveral = (s: PropertySchema): boolean =>
  s.type === "array" || (Array.isArray(s.type) && s.type.includes("array")) || (s.anyOf ?? []).some(takesSeveral);

/** The query keys of each route's schema that hold one value. */
function singleValuedKeys(app: QueryRouteTable): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const r of app.routes) {
    const props = (r.hooks?.query as { properties?: Record<string, PropertySchema> } | undefined)?.properties;
    if (!props) continue;
    const single = Object.entries(props)
      .filter(([, s]) => !takesSeveral(s))
      .map(([k]) => k);
    if (single.length) out.set(`${r.method} ${r.path}`, new Set(single));
  }
  return out;
}

/** Elysia plugin (global): `app` is the root app, read when the first request arrives. */
export function refuseRepeatedQueryFields(app: () => QueryRouteTable) {
  let keysByRoute: Map<string, Set<string>> | null = null;
  return new Elysia({ name: "repeated-query-fields" }).onTransform({ as: "global" }, ({ request, route }) => {
    const q = request.url.indexOf("?");
    if (q === -1) return;
    keysByRoute ??= singleValuedKeys(app());
    const single = keysByRoute.get(`${request.method} ${route}`);
    if (!single) return;
    const seen = new Set<string>();
    for (const key of new URLSearchParams(request.url.slice(q + 1)).keys()) {
      if (!single.has(key)) continue;
      if (seen.has(key)) {
        const message = `'${key}' is given more than once; give it once`;
        throw new ApiError("VALIDATION_FAILED", `Invalid request in query: ${message}.`, { field: key, fields: [{ path: `/${key}`, message }] });
      }
      seen.add(key);
    }
  });
}
