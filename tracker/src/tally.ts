/**
 * The Tally tracker, served at /js/tally.js:
 *   <script defer data-domain="example.com" src="https://tally.example/js/tally.js"></script>
 * Sends pageviews (also on SPA pushState/popstate), exit_link on outbound clicks, file_download on
 * common file extensions and custom events: tally('Signup', {props, value_cents}). tally.ids()
 * resolves to {visitor_id, session_id} for checkout attribution.
 *
 * Storage: none, unless the server answers with a first-party token (the site's strategy is
 * first_party_cookie); then it is kept in a cookie for a year, and deleted again as soon as the
 * server stops sending one. So a strategy change needs no edit of the snippet.
 * Ignored: localhost/file: pages and automated browsers (navigator.webdriver), unless the tag has
 * data-allow-localhost / data-allow-automation. data-api overrides the endpoint; data-hash counts
 * the #fragment as part of the path (hash-routed apps).
 */
interface Options {
  props?: Record<string, string | number | boolean>;
  value_cents?: number;
}
interface Ids {
  visitor_id: string | null;
  session_id: string | null;
}
type Queued = [string, Options?];
type TallyFn = ((name: string, options?: Options) => void) & { ids?: () => Promise<Ids>; q?: Queued[] };

((w: Window & { tally?: TallyFn }, d: Document, loc: Location) => {
  const script = d.currentScript as HTMLScriptElement | null;
  if (!script) return;
  const attr = (name: string) => script.getAttribute('data-' + name);
  const domain = attr('domain') || loc.hostname.replace(/^www\./, '');
  const api = attr('api') || new URL(script.src).origin + '/api/event';
  const hashMode = attr('hash') !== null;
  const FILES = /\.(pdf|xlsx?|docx?|txt|rtf|csv|exe|key|pp[st]x?|7z|pkg|rar|gz|zip|avi|mov|mp4|mpe?g|wmv|midi?|mp3|wav|wma|dmg|iso|msi|apk|epub)$/i;
  let ids: Ids = { visitor_id: null, session_id: null };
  let ready: Promise<unknown> | null = null;
  let lastPath: string | undefined;

  const ignored = () =>
    (attr('allow-localhost') === null && (/^(localhost|127(\.\d+){3}|\[::1\])$/.test(loc.hostname) || loc.protocol === 'file:')) ||
    (attr('allow-automation') === null && (navigator.webdriver || 'Cypress' in w || '_phantom' in w || '__nightmare' in w));

  const token = () => (d.cookie.match(/(?:^|; )tally_vid=([\w-]+)/) || [])[1];
  const keep = (t?: string) => {
    if (t) d.cookie = `tally_vid=${t};max-age=31536000;path=/;samesite=lax${loc.protocol === 'https:' ? ';secure' : ''}`;
    else if (token()) d.cookie = 'tally_vid=;max-age=0;path=/';
  };

  const post = (name: string, o: Options, link?: string) =>
    fetch(api, {
      method: 'POST',
      keepalive: true,
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({
        n: name, u: loc.href, d: domain, r: d.referrer || null, p: link ? { ...o.props, url: link } : o.props,
        value_cents: o.value_cents, visitor: token(), h: hashMode ? 1 : undefined,
      }),
    })
      .then((r) => r.json())
      .then((b) => {
        if (!b.visitor_id) return;
        ids = { visitor_id: b.visitor_id, session_id: b.session_id };
        keep(b.visitor);
      })
      .catch(() => undefined);

  /**
   * The first request may bring the token, so later events wait for it; clicks that leave the page
   * go at once (a deferred send would die with the page).
   */
  const send = (name: string, o: Options = {}, link?: string) => {
    if (ignored()) return;
    if (link || !ready) {
      const p = post(name, o, link);
      ready = ready || p;
    } else ready = ready.then(() => post(name, o));
  };

  const pageview = () => {
    const path = loc.pathname + (hashMode ? loc.hash : '');
    if (path === lastPath) return;
    lastPath = path;
    send('pageview');
  };

  const click = (e: MouseEvent) => {
    if (e.type === 'auxclick' && e.button !== 1) return;
    const a = (e.target as Element | null)?.closest?.('a[href]') as HTMLAnchorElement | null;
    if (!a || !/^https?:$/.test(a.protocol)) return;
    if (FILES.test(a.pathname)) send('file_download', {}, a.href);
    else if (a.host !== loc.host) send('exit_link', {}, a.href);
  };

  const push = history.pushState;
  history.pushState = function (...args: Parameters<History['pushState']>) {
    push.apply(this, args);
    pageview();
  };
  w.addEventListener('popstate', pageview);
  if (hashMode) w.addEventListener('hashchange', pageview);
  d.addEventListener('click', click, true);
  d.addEventListener('auxclick', click, true);

  const queued = w.tally?.q || [];
  const tally: TallyFn = (name, options) => send(name, options);
  tally.ids = () => Promise.resolve(ready).then(() => ids);
  w.tally = tally;
  pageview();
  for (const [name, options] of queued) tally(name, options);
})(window, document, location);
