import net, { type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real server (the test machine's Redis) that can be made to stall: while
 * stalled it accepts connections and reads what both sides send but forwards nothing either way, and
 * closes nothing, as a paused Redis, a peer dead without a reset or a network black hole does. On
 * resume what it held goes on in order; bytes a client sent before closing its side are still
 * delivered then (a paused Redis, once resumed, runs the commands waiting in its socket buffers).
 */
export interface StallingProxy {
  readonly port: number;
  stall(): void;
  /** Everything clients sent while stalled (latin1), to see which commands a stalled server was sent. */
  heldForServer(): string;
  resume(): void;
  close(): Promise<void>;
}

/** One direction of one connection: forwards at once, or holds while stalled. */
class Flow {
  private held: Buffer[] = [];
  /** The sending side has closed: once what is held is delivered, the receiving side is ended too. */
  ended = false;

  constructor(private readonly to: Socket, private readonly stalled: () => boolean, private readonly record?: (chunk: Buffer) => void) {}

  data(chunk: Buffer): void {
    if (!this.stalled()) return void this.to.write(chunk);
    this.held.push(chunk);
    this.record?.(chunk);
  }

  end(): void {
    this.ended = true;
    if (!this.stalled()) this.to.end();
  }

  flush(): void {
    for (const chunk of this.held) this.to.write(chunk);
    this.held = [];
    if (this.ended) this.to.end();
  }
}

export async function startStallingProxy(target: { host: string; port: number }): Promise<StallingProxy> {
  let stalled = false;
  let forServer = '';
  const flows = new Set<Flow>();
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy()); // a reset: its 'close' ends the other side (Flow)
  };
  const pipe = (from: Socket, to: Socket, record?: (chunk: Buffer) => void) => {
    const flow = new Flow(to, () => stalled, record);
    flows.add(flow);
    from.on('data', (chunk: Buffer) => flow.data(chunk));
    from.on('close', () => {
      flow.end();
      if (!stalled) flows.delete(flow);
    });
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    track(client);
    track(upstream);
    pipe(client, upstream, (chunk) => (forServer += chunk.toString('latin1')));
    pipe(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stall: () => void (stalled = true),
    heldForServer: () => forServer,
    resume() {
      stalled = false;
      for (const flow of flows) {
        flow.flush();
        if (flow.ended) flows.delete(flow);
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
