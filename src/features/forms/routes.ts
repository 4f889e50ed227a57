// Form submission routes (owner side): validate, call one service function, wrap in { data }.
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import type { authPlugin } from "../../http/auth";
import "./index"; // registers the publication_forms check with buckets

export const formRoutes = (_deps: Deps, auth: ReturnType<typeof authPlugin>) => new Elysia({ name: "forms" }).use(auth);
