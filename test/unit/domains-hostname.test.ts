// Hostname rules of custom domains (src/features/domains/hostname.ts) as properties: every
// spelling of a name normalizes to one stored form, whatever is accepted is a name DNS and TLS
// take, and whatever is refused is refused with CUSTOM_DOMAIN_INVALID, never another error.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { loadConfig } from "../../src/config";
import { ApiError } from "../../src/core/errors";
import { parseHostname } from "../../src/features/domains/hostname";

const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?$/);
const tld = fc.constantFrom("com", "org", "net", "de", "co.uk", "io");
const hostname = fc.tuple(fc.array(label, { minLength: 1, maxLength: 4 }), tld).map(([ls, t]) => `${ls.join(".")}.${t}`);

describe("custom-domain hostnames", () => {
  test("upper case, surrounding spaces and a trailing dot normalize to the same stored name", () => {
    // A generated label can be an invalid A-label ("xn--0", which a random run drew): such a
    // name is refused, and then every spelling of it is refused for the same reason.
    const outcome = (raw: string) => {
      try {
        return parseHostname(raw).ascii;
      } catch (e) {
        return `refused: ${(e as ApiError).details?.reason}`;
      }
    };
    fc.assert(
      fc.property(hostname, fc.boolean(), fc.boolean(), (h, upper, dot) => {
        const spelled = ` ${upper ? h.toUpperCase() : h}${dot ? "." : ""} `;
        expect(outcome(spelled)).toBe(outcome(h));
      }),
    );
    expect([outcome("XN--0.a.com."), outcome("xn--0.a.com")]).toEqual(["refused: invalid_characters", "refused: invalid_characters"]);
    expect(outcome(" WWW.Example.COM. ")).toBe("www.example.com");
  });

  test("anything accepted is a lower-case ASCII DNS name of at most 253 characters and 63 per label", () => {
    fc.assert(
      fc.property(fc.oneof(hostname, fc.string({ maxLength: 300 }), fc.webUrl(), fc.domain()), (raw) => {
        try {
          const h = parseHostname(raw);
          expect(h.ascii.length).toBeLessThanOrEqual(253);
          expect(h.ascii).toMatch(/^[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})+$/);
          expect(h.ascii.includes("_") || h.ascii.includes("*")).toBe(false);
        } catch (e) {
          expect(e).toBeInstanceOf(ApiError);
          expect((e as ApiError).code).toBe("CUSTOM_DOMAIN_INVALID");
          expect(typeof (e as ApiError).details?.reason).toBe("string");
        }
      }),
      { numRuns: 500 },
    );
  });

  test("a refusal says what is wrong: spaces are not a URL", () => {
    const message = (raw: string) => {
      try {
        parseHostname(raw);
        return "accepted";
      } catch (e) {
        return (e as ApiError).message;
      }
    };
    expect(message("not a host")).toBe('A hostname has no spaces ("not a host"): give one such as www.example.com.');
    expect(message("https://www.example.com/")).toStartWith("Give a bare hostname such as www.example.com, not a URL");
  });

  test("apex means a registrable domain itself (Public Suffix List)", () => {
    expect(parseHostname("example.com").apex).toBe(true);
    expect(parseHostname("example.co.uk").apex).toBe(true);
    expect(parseHostname("www.example.co.uk").apex).toBe(false);
    expect(parseHostname("a.b.example.com").apex).toBe(false);
  });

  test("IDN names are stored as punycode and shown as Unicode", () => {
    const h = parseHostname("Straße.Example.DE");
    expect(h.ascii).toBe("xn--strae-oqa.example.de");
    expect(h.unicode).toBe("straße.example.de");
  });
});

describe("--dns-resolver", () => {
  const parse = (v: string) => loadConfig({}, { "dns-resolver": v }).dnsResolver;
  test("host:port, a host alone (port 53), IPv6 with and without brackets; empty is the system's", () => {
    expect(parse("127.0.0.1:5353")).toBe("127.0.0.1:5353");
    expect(parse("10.0.0.2")).toBe("10.0.0.2:53");
    expect(parse("[::1]:5353")).toBe("[::1]:5353");
    expect(parse("2001:db8::53")).toBe("[2001:db8::53]:53");
    expect(loadConfig({}, {}).dnsResolver).toBeNull();
  });
  test("a malformed value stops the start with the option named", () => {
    expect(() => parse("127.0.0.1:99999")).toThrow(/--dns-resolver/);
    expect(() => parse("dns server")).toThrow(/--dns-resolver/);
  });
});
