import http from 'node:http';
import https from 'node:https';

export interface HttpResult<T = any> {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Raw body text or bytes, sent as is (malformed JSON tests, compressed bodies). */
  raw?: string | Buffer;
  /** A list sends the header once per value (a request with two Authorization headers). */
  headers?: Record<string, string | string[]>;
}

/** A tiny client over real HTTP(S); the test server's certificate is self-signed. */
export function request(method: string, url: string, opts: RequestOptions = {}): Promise<HttpResult> {
  const u = new URL(url);
  const payload = opts.raw ?? (opts.body !== undefined ? JSON.stringify(opts.body) : undefined);
  const headers: Record<string, string | string[]> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (payload !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  const lib = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(u, { method, headers, rejectUnauthorized: false, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          /* not JSON: keep text */
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
