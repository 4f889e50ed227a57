// What a dashboard page is: an optional navigation entry and the routes it adds to the shell.
import type { Elysia } from "elysia";
import type { NavItem, Shell } from "./shell";

export interface DashboardPage {
  nav?: NavItem;
  /** Adds the page's GET (shell.view) and form POST (shell.action) routes. */
  routes: (app: Elysia, shell: Shell) => Elysia;
}
