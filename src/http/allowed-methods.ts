// Which methods a path takes, read from the mounted route table: a request whose path exists
// with other methods gets 405 METHOD_NOT_ALLOWED and an Allow header (RFC 9110 15.5.6), not
// "no such route". Asked only when no route matched, so the table's patterns cost nothing on
// the requests that do.
import type { RouteTable } from "./body-validation";

const escape = (segment: string) => segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export function allowedMethodsOf(app: () => RouteTable): (method: string, pathname: string) => string[] {
  let table: { method: string; pattern: RegExp }[] | null = null;
  return (method, pathname) => {
    table ??= app().routes.map((r) => ({
      method: r.method.toUpperCase(),
      pattern: new RegExp(
        `^${r.path
          .split("/")
          .map((s) => (s.startsWith(":") ? "[^/]+" : s === "*" ? ".*" : escape(s)))
          .join("/")}/?$`,
      ),
    }));
    const allowed = new Set<string>();
    for (const r of table) if (r.method !== method && r.pattern.test(pathname)) allowed.add(r.method);
    if (allowed.has("GET")) allowed.add("HEAD");
    allowed.delete(method);
    return [...allowed].sort();
  };
}
