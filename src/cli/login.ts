// `pier login [URL]`, `pier logout [URL]`, `pier whoami [URL]`: the OAuth device flow (RFC 8628)
// through oauth4webapi, credentials kept in the user's config dir, never printed.
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import * as oauth from "oauth4webapi";
import { clientVersion } from "../core/version";
import { api, PierApiError, updateNotice } from "./client/http";
import { credentialsPath, loadCredentials, removeServer, saveCredentials, type ServerCredentials } from "./client/credentials";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const SCOPES = ["bucket_read", "bucket_write", "bucket_admin"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Io {
  out(line: string): void;
  err(line: string): void;
}
const stdio: Io = { out: (l) => console.log(l), err: (l) => console.error(l) };

/** "pier.example.com" -> https://pier.example.com; loopback names default to http. */
export function normalizeUrl(raw: string): string {
  let v = raw.trim();
  if (!/^https?:\/\//i.test(v)) v = (/^(localhost|127\.|\[::1\])/i.test(v) ? "http://" : "https://") + v;
  const u = new URL(v);
  return u.origin;
}

function defaultUrl(arg: string | undefined): string {
  if (arg) return normalizeUrl(arg);
  if (process.env.PIER_URL) return normalizeUrl(process.env.PIER_URL);
  return loadCredentials().default ?? "http://localhost:8080";
}

function parseArgs(argv: string[]) {
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--no-browser") flags["no-browser"] = true;
    else if (a === "--scope") flags.scope = argv[++i] ?? "";
    else if (a.startsWith("--scope=")) flags.scope = a.slice(8);
    else if (a.startsWith("-")) throw new Error(`unknown option ${a}`);
    else positional.push(a);
  }
  return { positional, flags };
}

/** Only where a desktop session exists: a headless server gets the printed link alone. */
function tryOpenBrowser(url: string): boolean {
  const opener = process.platform === "darwin" ? "open" : (process.env.DISPLAY || process.env.WAYLAND_DISPLAY) ? "xdg-open" : null;
  if (!opener || !Bun.which(opener)) return false;
  try {
    spawn(opener, [url], { stdio: "ignore", detached: true }).on("error", () => {}).unref();
    return true;
  } catch {
    return false;
  }
}

const insecureFor = (base: string) => ({ [oauth.allowInsecureRequests]: base.startsWith("http:") });

export async function login(argv: string[], io: Io = stdio): Promise<number> {
  const { positional, flags } = parseArgs(argv);
  const given = defaultUrl(positional[0]);
  const scope = typeof flags.scope === "string" ? flags.scope : "bucket_admin";
  if (!SCOPES.includes(scope)) {
    io.err(`pier login: --scope must be one of ${SCOPES.join(", ")}`);
    return 2;
  }
  // The server names its canonical base URL (the OAuth issuer); credentials are kept under it.
  const status = await api<{ client_version: string; urls: { base_url: string } }>(given, "/api/v1/status");
  const base = status.urls.base_url;
  const notice = updateNotice(status);
  if (notice) io.err(notice);
  if (base.startsWith("http:") && !/^http:\/\/(localhost|127\.|\[::1\])/.test(base)) io.err(`Warning: ${base} does not use HTTPS; the key travels in clear text.`);
  const options = insecureFor(base);
  const issuer = new URL(base);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...options }));

  const stored = loadCredentials().servers[base];
  let clientId = stored?.client_id;
  if (!clientId) {
    const reg = await oauth.dynamicClientRegistrationRequest(as, {
      client_name: `Pier CLI on ${hostname()}`.slice(0, 200), grant_types: [DEVICE_GRANT, "refresh_token"], token_endpoint_auth_method: "none",
    }, options);
    clientId = (await oauth.processDynamicClientRegistrationResponse(reg)).client_id;
  }
  const client: oauth.Client = { client_id: clientId, token_endpoint_auth_method: "none" };

  let device: oauth.DeviceAuthorizationResponse;
  try {
    device = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope: `pier:mcp ${scope}` }, options));
  } catch (e) {
    // A client registration the server no longer knows: register afresh once.
    if (!(e instanceof oauth.ResponseBodyError) || e.error !== "invalid_client" || !stored) throw e;
    removeServer(base);
    return login(argv, io);
  }

  const link = device.verification_uri_complete ?? device.verification_uri;
  io.out(`To connect this computer to ${base}, open:\n\n  ${link}\n`);
  io.out(`Connection ID: ${device.user_code}`);
  io.out("(A safety check only: confirm only if the page shows the same Connection ID at the top right. Never type it anywhere.)\n");
  if (!flags["no-browser"] && tryOpenBrowser(link)) io.out("Opened your browser.");
  io.out("Waiting for you to select Confirm Connection...");

  let interval = Math.max(1, device.interval ?? 5);
  const deadline = Date.now() + device.expires_in * 1000;
  let tokens: oauth.TokenEndpointResponse | null = null;
  while (!tokens) {
    await sleep(interval * 1000);
    if (Date.now() > deadline) {
      io.err("The login link expired. Run pier login again.");
      return 1;
    }
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
      if (e.error === "access_denied") {
        io.err("The connection was denied in the browser. Nothing was saved.");
        return 1;
      }
      if (e.error === "expired_token") {
        io.err("The login link expired. Run pier login again.");
        return 1;
      }
      throw e;
    }
  }
  const key = tokens.pier_api_key;
  if (typeof key !== "string") {
    io.err("The server did not return a pier_api_key; is this a Pier server?");
    return 1;
  }
  const who = await api<{ account: { id: string; name: string; permission_scope: string } | null }>(base, "/api/v1/agent_auth/status", { key });
  const data = loadCredentials();
  const previous = data.servers[base];
  data.servers[base] = { api_key: key, client_id: clientId, account_id: who.account?.id, account_name: who.account?.name, saved_at: new Date().toISOString() };
  data.default = base;
  saveCredentials(data);
  // Logging in again replaces the old connection: revoke it so no forgotten key stays valid.
  if (previous && previous.api_key !== key) await revokeOnServer(base, previous, io);
  io.out(`Logged in to ${base} as account ${who.account?.name ?? "?"} (${who.account?.permission_scope ?? scope}). Key saved to ${credentialsPath()}.`);
  return 0;
}

/** RFC 7009 revocation of a saved key: the key, its tokens and the connection end together. */
async function revokeOnServer(base: string, creds: ServerCredentials, io: Io): Promise<void> {
  try {
    const res = await fetch(`${base}/oauth/revoke`, {
      method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": `pier-cli/${clientVersion}` },
      body: new URLSearchParams({ token: creds.api_key, token_type_hint: "pier_api_key", client_id: creds.client_id }),
    });
    if (!res.ok) io.err(`The server did not confirm the revocation (${res.status}); revoke the old connection on ${base}/oauth/connections.`);
  } catch {
    io.err(`Could not reach ${base} to revoke the key; revoke the connection on ${base}/oauth/connections.`);
  }
}

export async function logout(argv: string[], io: Io = stdio): Promise<number> {
  const { positional } = parseArgs(argv);
  const base = defaultUrl(positional[0]);
  const creds = loadCredentials().servers[base];
  if (!creds) {
    io.err(`Not logged in to ${base}.`);
    return 1;
  }
  await revokeOnServer(base, creds, io);
  removeServer(base);
  io.out(`Logged out of ${base}.`);
  return 0;
}

export async function whoami(argv: string[], io: Io = stdio): Promise<number> {
  const { positional } = parseArgs(argv);
  const base = defaultUrl(positional[0]);
  const creds = loadCredentials().servers[base];
  if (!creds) {
    io.err(`Not logged in to ${base}. Run: pier login ${base}`);
    return 1;
  }
  try {
    const s = await api<{ server_version: string; client_version: string; account: { id: string; name: string; permission_scope: string; state: string } }>(base, "/api/v1/agent_auth/status", { key: creds.api_key });
    io.out(`${base}\naccount ${s.account.name} (${s.account.id}), scope ${s.account.permission_scope}, ${s.account.state}\nserver ${s.server_version}, CLI ${clientVersion}`);
    const notice = updateNotice(s);
    if (notice) io.err(notice);
    return 0;
  } catch (e) {
    if (e instanceof PierApiError && e.status === 401) {
      io.err(`The saved key for ${base} was revoked or expired. Run: pier login ${base}`);
      return 1;
    }
    throw e;
  }
}
