// `pier login [URL]`, `pier logout [URL]`, `pier whoami [URL]`: the OAuth device flow (RFC 8628)
// through oauth4webapi, credentials kept in the user's config dir, never printed.
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import * as oauth from "oauth4webapi";
import { clientVersion } from "../core/version";
import { UsageError, type CommandSpec, type Parsed } from "./client/args";
import type { Command, RunContext } from "./client/command";
import {
  clearTextWarning,
  credentialsPath,
  findServer,
  loadCredentials,
  normalizeUrl,
  removeServer,
  resolveServer,
  saveCredentials,
  type ServerCredentials,
} from "./client/credentials";
import { ApiFailure, CliError } from "./client/errors";
import { PierClient, updateNotice } from "./client/http";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const SCOPES = ["bucket_read", "bucket_write", "bucket_admin"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Io {
  out(line: string): void;
  err(line: string): void;
}
const stdio: Io = { out: (l) => console.log(l), err: (l) => console.error(l) };

const urlPositional = [{ name: "URL" }];
const urlHelp = "URL defaults to PIER_URL, else the server of the last pier login, else http://localhost:8080.";

/** The server a login command means; a first login with nothing configured tries the local default. */
function serverFor(args: Parsed): string {
  const url = args.positionals.URL;
  return url ? normalizeUrl(url) : (resolveServer({}) ?? "http://localhost:8080");
}

/** Only where a desktop session exists: a headless server gets the printed link alone. */
function tryOpenBrowser(url: string): boolean {
  const opener = process.platform === "darwin" ? "open" : process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? "xdg-open" : null;
  if (!opener || !Bun.which(opener)) return false;
  try {
    spawn(opener, [url], { stdio: "ignore", detached: true })
      .on("error", () => {})
      .unref();
    return true;
  } catch {
    return false;
  }
}

const insecureFor = (base: string) => ({ [oauth.allowInsecureRequests]: base.startsWith("http:") });

const loginSpec: CommandSpec = {
  name: "login",
  summary: "Connect this computer to a Pier: confirm in the browser, and the key is saved for every later pier command.",
  usage: "login [URL] [options]",
  positionals: urlPositional,
  options: [
    { name: "scope", value: "SCOPE", help: "bucket_read, bucket_write or bucket_admin (default bucket_admin)" },
    { name: "no-browser", help: "Only print the link; do not open a browser" },
  ],
  details: `${urlHelp}\nThe key is kept in ~/.config/pier/credentials.json ($XDG_CONFIG_HOME/pier; mode 0600) and never printed;\nthis server becomes the default of pier publish, preview, push, unpublish, whoami and logout.`,
};

async function runLogin(args: Parsed, ctx: RunContext, io: Io = stdio): Promise<number> {
  const given = serverFor(args);
  ctx.baseUrl = given;
  const scope = args.options.scope ?? "bucket_admin";
  if (!SCOPES.includes(scope)) throw new UsageError(`--scope must be one of ${SCOPES.join(", ")}`);
  // The server names its canonical base URL (the OAuth issuer); credentials are kept under it.
  const status = await new PierClient(given).call<{ client_version: string; urls: { base_url: string } }>("GET", "/api/v1/status");
  const base = status.urls.base_url;
  ctx.baseUrl = base;
  const notice = updateNotice(status);
  if (notice) io.err(notice);
  const clear = clearTextWarning(base);
  if (clear) io.err(clear);
  const options = insecureFor(base);
  const issuer = new URL(base);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...options }));

  const stored = findServer(loadCredentials(), base)?.creds;
  let clientId = stored?.client_id;
  if (!clientId) {
    const reg = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: `Pier CLI on ${hostname()}`.slice(0, 200),
        grant_types: [DEVICE_GRANT, "refresh_token"],
        token_endpoint_auth_method: "none",
      },
      options,
    );
    clientId = (await oauth.processDynamicClientRegistrationResponse(reg)).client_id;
  }
  const client: oauth.Client = { client_id: clientId, token_endpoint_auth_method: "none" };

  let device: oauth.DeviceAuthorizationResponse;
  try {
    device = await oauth.processDeviceAuthorizationResponse(
      as,
      client,
      await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope: `pier:mcp ${scope}` }, options),
    );
  } catch (e) {
    // A client registration the server no longer knows: register afresh once.
    if (!(e instanceof oauth.ResponseBodyError) || e.error !== "invalid_client" || !stored?.client_id) throw e;
    const data = loadCredentials();
    delete data.servers[base]!.client_id;
    saveCredentials(data);
    return runLogin(args, ctx, io);
  }

  // The page behind the link shows the same Connection ID at its top right; the entry page
  // (verification_uri) asks for it when someone opens the bare address instead of the link.
  const link = device.verification_uri_complete ?? device.verification_uri;
  io.out(`To connect this computer to ${base}, open:\n\n  ${link}\n`);
  io.out(`Connection ID: ${device.user_code}`);
  io.out("The page shows a Connection ID at the top right: confirm only if it is the same as this one.");
  if (device.verification_uri_complete) io.out(`If the link does not open, go to ${device.verification_uri} and enter the Connection ID there.\n`);
  if (!args.options["no-browser"] && tryOpenBrowser(link)) io.out("Opened your browser.");
  io.out("Waiting for you to select Confirm Connection...");

  let interval = Math.max(1, device.interval ?? 5);
  const deadline = Date.now() + device.expires_in * 1000;
  let tokens: oauth.TokenEndpointResponse | null = null;
  while (!tokens) {
    await sleep(interval * 1000);
    if (Date.now() > deadline) throw new CliError("the login link expired", "LOGIN_EXPIRED", "Run pier login again and confirm within 10 minutes.");
    try {
      tokens = await oauth.processDeviceCodeResponse(as, client, await oauth.deviceCodeGrantRequest(as, client, oauth.None(), device.device_code, options));
    } catch (e) {
      if (!(e instanceof oauth.ResponseBodyError)) throw e;
      if (e.error === "authorization_pending") continue;
      if (e.error === "slow_down") {
        const next = Number(e.cause.interval);
        interval = Number.isFinite(next) && next > interval ? next : interval + 5;
        continue;
      }
      if (e.error === "access_denied")
        throw new CliError("the connection was denied in the browser; nothing was saved", "LOGIN_DENIED", "Run pier login again if that was a mistake.");
      if (e.error === "expired_token") throw new CliError("the login link expired", "LOGIN_EXPIRED", "Run pier login again and confirm within 10 minutes.");
      throw e;
    }
  }
  const key = tokens.pier_api_key;
  if (typeof key !== "string") throw new CliError("the server did not return a pier_api_key", "NOT_A_PIER_SERVER", "Check that the URL is a Pier server.");
  const who = await new PierClient(base, key).call<{ account: { id: string; name: string; permission_scope: string } | null }>(
    "GET",
    "/api/v1/agent_auth/status",
  );
  const data = loadCredentials();
  const previous = data.servers[base];
  const aliases = [...new Set([...(previous?.aliases ?? []), ...(given !== base ? [given] : [])])];
  data.servers[base] = {
    api_key: key,
    client_id: clientId,
    account_id: who.account?.id,
    account_name: who.account?.name,
    saved_at: new Date().toISOString(),
    ...(aliases.length ? { aliases } : {}),
  };
  data.default = base;
  saveCredentials(data);
  // Logging in again replaces the old connection: revoke it so no forgotten key stays valid.
  if (previous && previous.api_key !== key) await revokeOnServer(base, previous, io);
  io.out(`Logged in to ${base} as account ${who.account?.name ?? "?"} (${who.account?.permission_scope ?? scope}). Key saved to ${credentialsPath()}.`);
  io.out("pier publish, preview, push, unpublish and whoami now use this server and key without flags.");
  return 0;
}

/** RFC 7009 revocation of a saved key: the key, its tokens and the connection end together. */
async function revokeOnServer(base: string, creds: ServerCredentials, io: Io): Promise<void> {
  try {
    const res = await fetch(`${base}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": `pier-cli/${clientVersion}` },
      body: new URLSearchParams({ token: creds.api_key, token_type_hint: "pier_api_key", ...(creds.client_id ? { client_id: creds.client_id } : {}) }),
    });
    if (!res.ok) io.err(`The server did not confirm the revocation (${res.status}); revoke the old connection on ${base}/oauth/connections.`);
  } catch {
    io.err(`Could not reach ${base} to revoke the key; revoke the connection on ${base}/oauth/connections.`);
  }
}

const logoutSpec: CommandSpec = {
  name: "logout",
  summary: "Revoke the saved key on the server and forget it.",
  usage: "logout [URL]",
  positionals: urlPositional,
  details: urlHelp,
};

async function runLogout(args: Parsed, ctx: RunContext, io: Io = stdio): Promise<number> {
  const url = serverFor(args);
  ctx.baseUrl = url;
  const found = findServer(loadCredentials(), url);
  if (!found) throw new CliError(`not logged in to ${url}`, "NOT_LOGGED_IN", "Nothing to do; pier whoami shows the saved server.");
  const clear = clearTextWarning(found.base);
  if (clear) io.err(clear);
  await revokeOnServer(found.base, found.creds, io);
  removeServer(found.base);
  io.out(`Logged out of ${found.base}.`);
  return 0;
}

const whoamiSpec: CommandSpec = {
  name: "whoami",
  summary: "Show the server, account and scope of the saved key (and whether it still works).",
  usage: "whoami [URL]",
  positionals: urlPositional,
  details: urlHelp,
};

async function runWhoami(args: Parsed, ctx: RunContext, io: Io = stdio): Promise<number> {
  const url = serverFor(args);
  ctx.baseUrl = url;
  const found = findServer(loadCredentials(), url);
  if (!found) throw new CliError(`not logged in to ${url}`, "NOT_LOGGED_IN", `Run pier login ${url}.`);
  const base = found.base;
  const clear = clearTextWarning(base);
  if (clear) io.err(clear);
  try {
    const s = await new PierClient(base, found.creds.api_key).call<{
      server_version: string;
      client_version: string;
      account: { id: string; name: string; permission_scope: string; state: string };
    }>("GET", "/api/v1/agent_auth/status");
    io.out(
      `${base}\naccount ${s.account.name} (${s.account.id}), scope ${s.account.permission_scope}, ${s.account.state}\nserver ${s.server_version}, CLI ${clientVersion}`,
    );
    const notice = updateNotice(s);
    if (notice) io.err(notice);
    return 0;
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 401)
      throw new CliError(`the saved key for ${base} was revoked or expired`, "KEY_REVOKED", `Run pier login ${base}.`);
    throw e;
  }
}

export const login: Command = { spec: loginSpec, run: (a, c) => runLogin(a, c) };
export const logout: Command = { spec: logoutSpec, run: (a, c) => runLogout(a, c) };
export const whoami: Command = { spec: whoamiSpec, run: (a, c) => runWhoami(a, c) };
