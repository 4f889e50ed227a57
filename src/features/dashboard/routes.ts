// The dashboard's routes: every registered page in one shell, then the signed-in not-found
// page for any other /dashboard/ path (after the pages, so it only catches what they do not).
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { dashboardAssetRoutes } from "./assets";
import { dashboardPages } from "./registry";
import { createShell, type NavItem } from "./shell";

export const dashboardRoutes = (deps: Deps) => {
  const nav: NavItem[] = dashboardPages.flatMap((p) => (p.nav ? [p.nav] : []));
  const tabs = dashboardPages.flatMap((p) => (p.bucketTab ? [p.bucketTab] : []));
  const shell = createShell(deps, nav, tabs);
  let app = new Elysia({ name: "dashboard" }).use(dashboardAssetRoutes()) as unknown as Elysia;
  for (const page of dashboardPages) app = page.routes(app, shell);
  return app.get(
    "/dashboard/*",
    shell.view((s) => shell.notFound(s)),
    { detail: { hide: true } },
  );
};
