import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * A local mail server speaking real SMTP (smtp-server, by nodemailer's authors), plain text with
 * AUTH PLAIN/LOGIN when given credentials. It keeps every message it accepts, decoded enough to
 * assert on: the envelope, the From and Subject headers and the text body. `stop()` and `start()`
 * take it down and bring it back on the same port: a mail server that is briefly away. `refuse`
 * names recipients it answers `550` (a permanent refusal, as for a mailbox that does not exist).
 */
export interface ReceivedMail {
  /** Envelope sender (MAIL FROM) and recipients (RCPT TO). */
  from: string;
  to: string[];
  /** Header names lower-cased, folded lines joined. */
  headers: Record<string, string>;
  subject: string;
  /** The text body, transfer encoding undone, line ends as \n. */
  text: string;
  /** The user that logged in, if any. */
  user?: string;
}

export interface SmtpDouble {
  port: number;
  mails: ReceivedMail[];
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startSmtpDouble(opts: { user?: string; pass?: string; refuse?: (address: string) => boolean } = {}): Promise<SmtpDouble> {
  const mails: ReceivedMail[] = [];
  let server: SMTPServer | null = null;
  let port = 0;
  const make = () => new SMTPServer({
    logger: false,
    // Plain SMTP on loopback: no certificate to trust, and AUTH allowed without TLS.
    disabledCommands: opts.user ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !opts.user,
    allowInsecureAuth: true,
    onAuth(auth, _session, cb) {
      if (auth.username === opts.user && auth.password === opts.pass) return cb(null, { user: auth.username });
      return cb(new Error('535 Authentication failed'));
    },
    onRcptTo(address, _session, cb) {
      if (opts.refuse?.(address.address)) return cb(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
      return cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const parsed = parse(Buffer.concat(chunks).toString('latin1'));
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          ...parsed,
        });
        cb();
      });
    },
  });
  const double: SmtpDouble = {
    get port() {
      return port;
    },
    mails,
    async start() {
      const s = make();
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(port, '127.0.0.1', () => resolve());
      });
      server = s;
      port = (s.server.address() as AddressInfo).port;
    },
    async stop() {
      const s = server;
      server = null;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
  await double.start();
  return double;
}

/** Headers and body of a single-part text message, as nodemailer writes one. */
function parse(raw: string): Pick<ReceivedMail, 'headers' | 'subject' | 'text'> {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  const body = raw.slice(split + 4);
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  const bytes = encoding === 'quoted-printable' ? unQuote(body)
    : encoding === 'base64' ? Buffer.from(body, 'base64') : Buffer.from(body, 'latin1');
  return { headers, subject: decodeWords(headers.subject ?? ''), text: bytes.toString('utf8').replace(/\r\n/g, '\n') };
}

function unQuote(body: string): Buffer {
  const soft = body.replace(/=\r\n/g, '');
  const out: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    if (soft[i] === '=' && /^[0-9A-F]{2}$/i.test(soft.slice(i + 1, i + 3))) {
      out.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else out.push(soft.charCodeAt(i));
  }
  return Buffer.from(out);
}

/** RFC 2047 encoded words (=?UTF-8?Q?...?= or ?B?), as nodemailer writes a non-ASCII subject. */
function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=\s*/g, (_m, _charset, kind: string, text: string) =>
    (kind.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : unQuote(text.replace(/_/g, ' '))).toString('utf8')).trim();
}
