// How long one ACME order may take (D235). The job runner runs one job at a time, so an order
// that never ends holds up every publish, delete, renewal and backup of the instance: each
// request to the CA has a timeout, and the whole order a deadline after which it is a failed
// order with the usual backoff. Tests shorten them.

export const acmeLimits = {
  /** One HTTP request to the CA (connect to last byte). */
  requestTimeoutMs: 30_000,
  /** One order, from the account lookup to the downloaded certificate, polls included. */
  orderDeadlineMs: 5 * 60_000,
  /** A CA's answer is a few kilobytes (a certificate chain at most). */
  maxResponseBytes: 1024 * 1024,
  maxRedirects: 5,
};
