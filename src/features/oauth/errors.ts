// OAuth endpoints answer in the RFC 6749 §5.2 / RFC 7591 §3.2.2 / RFC 8628 §3.5 error format
// `{ error, error_description }`, not Pier's envelope: standard OAuth clients parse exactly
// that shape. Services throw OAuthError; the routes turn it into the response.

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "invalid_target"
  | "access_denied"
  | "unsupported_response_type"
  | "server_error"
  | "authorization_pending"
  | "slow_down"
  | "expired_token"
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  | "temporarily_unavailable";

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(description);
    this.name = "OAuthError";
  }

  toJSON() {
    return { error: this.error, error_description: this.description, ...this.extra };
  }
}
