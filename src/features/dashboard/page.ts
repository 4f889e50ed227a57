// What a dashboard page is: an optional navigation entry and the routes it adds to the shell.
import type { Elysia } from "elysia";
import type { BucketTab, NavItem, Shell } from "./shell";

export interface DashboardPage {
  nav?: NavItem;
  /** A tab on every bucket's pages, at /dashboard/buckets/<id>/<path> ("" is the overview). */
  bucketTab?: BucketTab;
  /** Adds the page's GET (shell.view) and form POST (shell.action) routes. */
  routes: (app: Elysia, shell: Shell) => Elysia;
}
