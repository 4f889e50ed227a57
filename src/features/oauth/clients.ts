// Dynamic client registration (RFC 7591). Only public clients: no secret is issued and the
// token endpoint authenticates nobody, so PKCE (authorization code) and the user's approval
// (device code) are what bind tokens to the person who approved them.
import { eq } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { oauthClients } from "../../db/schema";
import { OAuthError } from "./errors";
import { CLIENT_ID_PREFIX, newClientId } from "./credentials";

export const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
export const GRANT_TYPES = ["authorization_code", "refresh_token", DEVICE_GRANT] as const;
export type ClientRow = typeof oauthClients.$inferSelect;

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

// The client name is shown on the consent and device pages as "<name> wants to connect". Characters
// that reorder or hide text (a right-to-left override makes "moc.kcab" read "back.com", a
// zero-width space hides a lookalike; emoji joined with U+200D are refused with it) would let a client pass for another, so registration
// refuses them: controls (Cc), format characters (Cf: bidi controls, zero-width, soft hyphen),
// unassigned, private-use and surrogate code points, line and paragraph separators, and the
// blank fillers that render as nothing (Hangul fillers, braille blank).
const DECEPTIVE_NAME_CHARS = /[\p{Cc}\p{Cf}\p{Cn}\p{Co}\p{Cs}\p{Zl}\p{Zp}\u115F\u1160\u3164\uFFA0\u2800\u034F\u17B4\u17B5]/u;

/**
 * A client name as people are shown it. Registration refuses deceptive characters, but clients
 * registered before that rule keep their names: every display strips them again.
 */
export function displayClientName(name: string): string {
  return name.replace(new RegExp(DECEPTIVE_NAME_CHARS.source, "gu"), "").trim().slice(0, 200) || "Unnamed client";
}

/** https anywhere, or http on a loopback address (native apps, RFC 8252 §7.3). No fragments. */
export function checkRedirectUri(raw: unknown): string {
  if (typeof raw !== "string" || raw.length > 2000 || !URL.canParse(raw))
    throw new OAuthError("invalid_redirect_uri", "Each redirect URI must be an absolute URL.");
  const u = new URL(raw);
  if (u.hash || raw.includes("#")) throw new OAuthError("invalid_redirect_uri", "Redirect URIs must not contain a fragment.");
  if (u.username || u.password) throw new OAuthError("invalid_redirect_uri", "Redirect URIs must not contain credentials.");
  if (u.protocol === "https:") return raw;
  if (u.protocol === "http:" && LOOPBACK.has(u.hostname)) return raw;
  throw new OAuthError(
    "invalid_redirect_uri",
    `Redirect URI ${raw.slice(0, 200)} must use https, or http on a loopback address (127.0.0.1, [::1], localhost).`,
  );
}

function stringArray(v: unknown, field: string, max: number): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length > max || !v.every((x) => typeof x === "string")) {
    throw new OAuthError("invalid_client_metadata", `${field} must be an array of at most ${max} strings.`);
  }
  return v as string[];
}

export function registerClient(deps: Deps, input: Record<string, unknown>) {
  const method = input.token_endpoint_auth_method ?? "none";
  if (method !== "none") throw new OAuthError("invalid_client_metadata", 'Only public clients are supported: token_endpoint_auth_method must be "none".');
  const grantTypes = stringArray(input.grant_types, "grant_types", 5) ?? ["authorization_code", "refresh_token"];
  for (const g of grantTypes) {
    if (!(GRANT_TYPES as readonly string[]).includes(g))
      throw new OAuthError("invalid_client_metadata", `Unsupported grant type "${g.slice(0, 80)}". Supported: ${GRANT_TYPES.join(", ")}.`);
  }
  const responseTypes = stringArray(input.response_types, "response_types", 3) ?? (grantTypes.includes("authorization_code") ? ["code"] : []);
  if (responseTypes.some((r) => r !== "code")) throw new OAuthError("invalid_client_metadata", 'Only the "code" response type is supported.');
  const redirectUris = (stringArray(input.redirect_uris, "redirect_uris", 10) ?? []).map(checkRedirectUri);
  if (grantTypes.includes("authorization_code") && redirectUris.length === 0) {
    throw new OAuthError("invalid_redirect_uri", "The authorization_code grant needs at least one redirect URI.");
  }
  const rawName = input.client_name;
  if (rawName !== undefined && (typeof rawName !== "string" || rawName.length > 200))
    throw new OAuthError("invalid_client_metadata", "client_name must be a string of at most 200 characters.");
  if (typeof rawName === "string" && DECEPTIVE_NAME_CHARS.test(rawName)) {
    throw new OAuthError("invalid_client_metadata", "client_name must not contain control, bidirectional-override or invisible characters.", {
      field: "client_name",
      reason: "deceptive_characters",
    });
  }
  const clientName = (rawName as string | undefined)?.trim() || "Unnamed client";
  const now = deps.clock.now();
  const row = deps.db
    .insert(oauthClients)
    .values({
      id: newClientId(),
      clientName,
      redirectUris,
      grantTypes,
      responseTypes,
      createdAt: now.toISOString(),
    })
    .returning()
    .get();
  return {
    client_id: row.id,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    client_name: row.clientName,
    redirect_uris: row.redirectUris,
    grant_types: row.grantTypes,
    response_types: row.responseTypes,
    token_endpoint_auth_method: "none",
  };
}

/** The registered client, or invalid_client (RFC 6749 §5.2). */
export function getClient(deps: Deps, clientId: unknown): ClientRow {
  const id = typeof clientId === "string" && clientId.startsWith(CLIENT_ID_PREFIX) && clientId.length < 100 ? clientId : null;
  const row = id ? deps.db.select().from(oauthClients).where(eq(oauthClients.id, id)).get() : undefined;
  if (!row) throw new OAuthError("invalid_client", "Unknown client_id. Register the client at /oauth/register first.");
  return row;
}

export function assertGrantType(client: ClientRow, grant: string): void {
  if (!client.grantTypes.includes(grant)) throw new OAuthError("unauthorized_client", `This client did not register the ${grant} grant type.`);
}
