// IP -> ISO country code, offline, from an MMDB file read with mmdb-lib. The embedded database
// is @ip-location-db/geo-whois-asn-country-mmdb (data CC BY 4.0, NRO; see docs/analytics.md);
// --geoip-db FILE uses another (any MMDB with `country_code` or MaxMind's `country.iso_code`).
import { readFileSync } from "node:fs";
import { Reader } from "mmdb-lib";
import embeddedDb from "@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb" with { type: "file" };

// mmdb-lib types its records as MaxMind's; this database's records are { country_code }.
type AnyRecord = import("mmdb-lib").Response;
type CountryRecord = { country_code?: string; country?: { iso_code?: string } };

export type CountryOf = (ip: string) => string | null;

// The file is immutable, so one parsed copy per path serves every Pier in the process (tests
// start many): 7.5 MiB read once, not once per start.
const readers = new Map<string, Reader<AnyRecord>>();

export function countryLookup(file: string | null): CountryOf {
  const path = file ?? embeddedDb;
  let reader: Reader<AnyRecord> | null = null;
  return (ip) => {
    if (reader === null) {
      reader = readers.get(path) ?? new Reader<AnyRecord>(readFileSync(path));
      readers.set(path, reader);
    }
    try {
      const r = reader.get(ip) as CountryRecord | null;
      const code = r?.country_code ?? r?.country?.iso_code;
      return typeof code === "string" && /^[A-Z]{2}$/.test(code) ? code : null;
    } catch {
      return null; // not an IP address mmdb-lib understands
    }
  };
}

/** Fail at start, with the flag's name, when --geoip-db is not a readable MMDB file. */
export function checkGeoDb(file: string | null): string | null {
  if (file === null) return null;
  try {
    const reader = new Reader<AnyRecord>(readFileSync(file));
    readers.set(file, reader);
    return null;
  } catch (e) {
    return `--geoip-db ${file} is not a readable MMDB database: ${(e as Error).message}`;
  }
}
