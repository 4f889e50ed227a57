// Host names and addresses that mean this machine.
import ipaddr from "ipaddr.js";

/** This machine's own names and addresses: localhost and *.localhost, 127.0.0.0/8, ::1 (also IPv4-mapped). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  return ipaddr.isValid(h) && ipaddr.process(h).range() === "loopback";
}
