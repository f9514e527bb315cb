import { domainToASCII } from 'node:url';
/**
 * A bare DNS host name: labels of letters, digits and inner hyphens, at most 253 characters; no
 * scheme, port or path. Any case (callers that store one lower-case it first).
 */
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export const isHostname = (value: string): boolean => HOSTNAME.test(value);

/** `host` is `domain` or one of its subdomains (label boundary, so notexample.com is not example.com). */
export const withinDomain = (host: string, domain: string): boolean => host === domain || host.endsWith('.' + domain);

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * A host typed in Unicode (`bücher.example`) in its ASCII form (`xn--bcher-kva.example`), as browsers put
 * it in `location.hostname` and URL parsing gives it: a site saved in Unicode would otherwise match no
 * event. ASCII input is returned as is (no cost on the collection path); what is not a valid name stays
 * as written, for the caller's own refusal.
 */
export const asciiHost = (host: string): string => (NON_ASCII.test(host) ? domainToASCII(host) || host : host);
