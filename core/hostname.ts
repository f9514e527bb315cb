/**
 * A bare DNS host name: labels of letters, digits and inner hyphens, at most 253 characters; no
 * scheme, port or path. Any case (callers that store one lower-case it first).
 */
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export const isHostname = (value: string): boolean => HOSTNAME.test(value);

/** `host` is `domain` or one of its subdomains (label boundary, so notexample.com is not example.com). */
export const withinDomain = (host: string, domain: string): boolean => host === domain || host.endsWith('.' + domain);
