import { createReadStream } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Command, Option } from 'commander';

/**
 * `tally`: the operator CLI. It talks to the running server over the admin socket, prints one JSON
 * object on stdout and exits 0, or prints {"error":{code,message}} on stderr and exits 1.
 */
const socketPath = () =>
  process.env.TALLY_ADMIN_SOCKET || path.join(path.resolve(process.env.TALLY_DATA_DIR ?? 'data'), 'admin.sock');

function fail(code: string, message: string): never {
  process.stderr.write(JSON.stringify({ error: { code, message } }) + '\n');
  process.exit(1);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Why the server could not be reached or answer, with what the operator should do about it. */
function unreachable(command: string, code: string): string {
  // A connection cut mid-command is a server going away (a shutdown), not one that is not running.
  if (code === 'ECONNRESET' || code === 'EPIPE') {
    const after = command === 'events import'
      ? '; an import cut by a shutdown stored none of its events and can be run again'
      : '';
    return `the Tally server closed the connection before answering (${code}): it may be shutting down${after}`;
  }
  if (code === 'EACCES') return `no permission to open the admin socket ${socketPath()} (EACCES): run tally as the user the server runs as`;
  return `cannot reach the Tally server at ${socketPath()} (${code}); is it running?`;
}

function call(command: string, args: Record<string, string | undefined>, body?: Readable): Promise<void> {
  const qs = new URLSearchParams(Object.entries(args).filter((e): e is [string, string] => e[1] !== undefined));
  return new Promise((resolve) => {
    const req = http.request(
      { socketPath: socketPath(), method: 'POST', path: `/${command.replace(' ', '/')}?${qs}`, headers: { 'content-type': 'application/x-ndjson' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          if (res.statusCode === 200) {
            process.stdout.write(text.trim() + '\n');
            return resolve();
          }
          const error = (parse(text) as { error?: { code?: string; message?: string } } | undefined)?.error;
          fail(error?.code ?? 'internal', error?.message ?? `the server answered ${res.statusCode}: ${text.trim().slice(0, 200)}`);
        });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => fail('server_unreachable', unreachable(command, err.code ?? err.message)));
    if (body) {
      body.on('error', (err) => fail('invalid_request', `cannot read the file: ${err.message}`));
      body.pipe(req);
    } else req.end();
  });
}

type Opts = Record<string, string | undefined>;
/** Commander's camelCase option names back to the --flag names the server validates. */
const flags = (o: Opts) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()), v]));

const program = new Command('tally').description('Tally admin CLI').showHelpAfterError();
/** Every runnable command line ("org create", "seed", ...), for the message when none was given. */
const commandLines = (c: Command, prefix = ''): string[] =>
  c.commands.flatMap((sub) => (sub.commands.length ? commandLines(sub, `${prefix}${sub.name()} `) : [`${prefix}${sub.name()}`]));

program.exitOverride((err) => {
  if (err.exitCode === 0) process.exit(0);
  // `tally` or `tally org` alone: commander would print help to stderr, which the JSON contract hides.
  if (err.code === 'commander.help') fail('invalid_request', `a command is required: ${commandLines(program).join(', ')} (--help for options)`);
  fail('invalid_request', err.message.replace(/^error: /, ''));
});
program.configureOutput({ writeErr: () => undefined });

const group = (name: string, desc: string) => program.command(name).description(desc);
const run = (command: string) => (o: Opts) => call(command, flags(o));

const org = group('org', 'organisations');
org.command('create').requiredOption('--name <name>').option('--retention-days <days>').action(run('org create'));

const user = group('user', 'users');
user.command('create').requiredOption('--org <org>').requiredOption('--email <email>')
  .addOption(new Option('--role <role>').choices(['owner', 'admin', 'member']).makeOptionMandatory())
  .action(run('user create'));
user.command('remove').requiredOption('--org <org>').requiredOption('--user <user>').action(run('user remove'));

const site = group('site', 'sites');
site.command('create').requiredOption('--org <org>').requiredOption('--domain <domain>').option('--name <name>')
  .option('--timezone <tz>').option('--currency <code>').action(run('site create'));

const key = group('key', 'API keys');
key.command('create').requiredOption('--org <org>').requiredOption('--user <user>').option('--scopes <scopes>')
  .option('--sites <sites>').option('--expires-at <iso>').option('--name <name>').action(run('key create'));
key.command('revoke').requiredOption('--key <key>').action(run('key revoke'));
key.command('list').requiredOption('--org <org>').action(run('key list'));

const retention = group('retention', 'data retention');
retention.command('purge').description('delete data older than each organisation\'s retention, now').option('--org <org>')
  .action(run('retention purge'));

const events = group('events', 'events');
events.command('import').requiredOption('--site <site>').requiredOption('--file <file>', 'NDJSON file, - for stdin')
  .action((o: Opts) => call('events import', { site: o.site }, o.file === '-' ? process.stdin : createReadStream(o.file!)));
events.command('stats').description('live collection counters and latencies since the server started').action(run('events stats'));

program.command('seed').description('generate realistic synthetic traffic inside ClickHouse')
  .requiredOption('--site <site>').requiredOption('--events <n>').requiredOption('--days <d>').option('--seed <s>')
  .action(run('seed'));

program.parseAsync(process.argv).catch((err: Error) => fail('internal', err.message));
