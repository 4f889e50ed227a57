// Files, uploads, versions and the storage endpoint mount together (one line in features/index.ts).
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import type { authPlugin } from "../../http/auth";
import { storageRoutes } from "../storage/routes";
import { uploadRoutes } from "../uploads/routes";
import { versionRoutes } from "../versions/routes";
import { fileRoutes } from "./routes";

export const fileFeatureRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "file-features" })
    .use(fileRoutes(deps, auth))
    .use(uploadRoutes(deps, auth))
    .use(versionRoutes(deps, auth))
    .use(storageRoutes(deps, auth));
