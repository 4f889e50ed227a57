// The dashboard pages' Content-Security-Policy: Pier's own scripts and connections only
// (`'self'` is the API origin; site hosts are other origins), inline styles (the layout has
// them), images and media from Pier itself, forms posting back to Pier, never framed. One
// directive per line so a page feature that needs one more source adds a line here.
const directives = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "media-src 'self'",
  // A received message's HTML body, framed from its message page (served with its own sandbox CSP).
  "frame-src 'self'",
];

export const DASHBOARD_CSP = directives.join("; ");
