/**
 * The Tally tracker, served at /js/tally.js:
 *   <script defer data-domain="example.com" src="https://tally.example/js/tally.js"></script>
 * Sends pageviews (also on SPA pushState/replaceState/popstate and back/forward-cache restores),
 * exit_link on outbound clicks, file_download on common file extensions (or links with `download`)
 * and custom events: tally('Signup', {props, value_cents}). tally.ids() resolves to
 * {visitor_id, session_id} for checkout attribution, once the events sent so far are answered.
 *
 * Every event goes at once, its page, referrer and props read when it happens (a send never waits
 * for another's answer, so a slow or lost answer holds nothing back). Each carries the page's token:
 * the cookie's, or a random one made here. The server uses it only on first_party_cookie sites and
 * then answers with it; only then is it written to a cookie (for a year), and the cookie is deleted
 * as soon as an answer comes without one. So nothing is stored on other sites, a strategy change
 * needs no edit of the snippet, and events sent before the first answer are one visitor.
 * A 503 (not stored) is sent again twice, after 2 and 4 seconds or its Retry-After when longer (at
 * most 30): the server's Retry-After is a floor, so refused browsers still back off and spread out.
 * No sendBeacon fallback: keepalive fetch is in every current browser, and resending through a beacon
 * after a failed fetch would count twice an event whose answer, not request, was lost.
 * A module tag (type="module") is found by its file name, tally.js.
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

((w: Window & { tally?: TallyFn }, d: Document & { prerendering?: boolean }, loc: Location) => {
  // A module tag (type="module") has no currentScript: find the tag by its file name instead.
  const script = (d.currentScript || d.querySelector('script[src*="tally.js"]')) as HTMLScriptElement | null;
  // A second copy of the tag (a tag manager beside a hard-coded one) would count every page twice.
  if (!script || w.tally?.ids) return;
  const attr = (name: string) => script.getAttribute('data-' + name);
  const bare = (host: string) => host.replace(/^www\./, '');
  const domain = attr('domain') || bare(loc.hostname);
  const api = attr('api') || new URL(script.src).origin + '/api/event';
  const hashMode = attr('hash') !== null;
  const FILES = /\.(pdf|xlsx?|docx?|od[tsp]|txt|rtf|csv|exe|key|pp[st]x?|7z|pkg|rar|gz|tgz|bz2|xz|zip|avi|mov|mp4|mpe?g|webm|wmv|midi?|mp3|m4a|wav|wma|flac|ogg|dmg|iso|msi|apk|epub)$/i;
  let ids: Ids = { visitor_id: null, session_id: null };
  let pending: Promise<unknown> = Promise.resolve();
  let lastPath: string | undefined;

  const ignored = () =>
    (attr('allow-localhost') === null && (/^(localhost|.*\.localhost|127(\.\d+){3}|0\.0\.0\.0|\[::1\])$/.test(loc.hostname) || loc.protocol === 'file:')) ||
    (attr('allow-automation') === null && (navigator.webdriver || 'Cypress' in w || '_phantom' in w || '__nightmare' in w));

  // A sandboxed frame without allow-same-origin may not read cookies: it is tracked without one.
  const cookie = (set?: string) => {
    try {
      if (set === undefined) return (d.cookie.match(/(?:^|; )tally_vid=([\w-]+)/) || [])[1];
      d.cookie = `tally_vid=${set};max-age=${set ? 31536000 : 0};path=/;samesite=lax${loc.protocol === 'https:' ? ';secure' : ''}`;
    } catch {
      // no cookie here
    }
  };
  let token = cookie() || btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(12)))).replace(/\+/g, '-').replace(/\//g, '_');

  const post = (body: string, tries: number): Promise<unknown> =>
    fetch(api, { method: 'POST', keepalive: true, headers: { 'content-type': 'text/plain' }, body })
      .then((r) => r.status === 503 && tries < 3
        ? new Promise((again) => setTimeout(again, Math.min(Math.max(+r.headers.get('retry-after')! || 0, 2 * tries), 30) * 1000)).then(() => post(body, tries + 1))
        : r.json().then((b) => {
          if (!r.ok) return console.warn('tally:', b.error?.message);
          if (!b.visitor_id) return;
          ids = { visitor_id: b.visitor_id, session_id: b.session_id };
          if (b.visitor) cookie((token = b.visitor));
          else if (cookie()) cookie('');
        }))
      .catch(() => undefined);

  const send = (name: string, o: Options = {}, link?: string) => {
    if (ignored()) return;
    let body: string;
    try {
      body = JSON.stringify({
        n: name, u: loc.href, d: domain, r: d.referrer || null, p: link ? { ...o.props, url: link } : o.props,
        value_cents: o.value_cents, visitor: token, h: hashMode ? 1 : undefined,
      });
    } catch (e) {
      return console.warn('tally:', e); // props that are not JSON: this event only is dropped
    }
    // What ids() waits for; settled to nothing, so a long-lived page holds no chain of answers.
    pending = Promise.all([pending, post(body, 1)]).then(() => undefined);
  };

  const pageview = () => {
    const path = loc.pathname + (hashMode ? loc.hash : '');
    if (path === lastPath) return;
    lastPath = path;
    send('pageview');
  };

  /** The link clicked: in a shadow root or an SVG too (its href is an attribute, not a URL). */
  const click = (e: MouseEvent) => {
    if (e.type === 'auxclick' && e.button !== 1) return;
    const a = e.composedPath().find((n) => /^(a|area)$/.test((n as Element).localName)) as Element | undefined;
    const href = a && (a.getAttribute('href') ?? a.getAttribute('xlink:href'));
    if (href == null) return;
    let url: URL;
    try {
      url = new URL(href, loc.href);
    } catch {
      return; // not a URL
    }
    if (!/^https?:$/.test(url.protocol)) return;
    if (FILES.test(url.pathname) || a!.hasAttribute('download')) send('file_download', {}, url.href.split('#')[0]);
    else if (bare(url.host) !== bare(loc.host)) send('exit_link', {}, url.href);
  };

  for (const method of ['pushState', 'replaceState'] as const) {
    const original = history[method];
    history[method] = function (...args: Parameters<History['pushState']>) {
      original.apply(this, args);
      pageview();
    };
  }
  w.addEventListener('popstate', pageview);
  // A page restored from the back/forward cache runs no script again: it is a new view all the same.
  w.addEventListener('pageshow', (e) => {
    if (e.persisted) {
      lastPath = undefined;
      pageview();
    }
  });
  if (hashMode) w.addEventListener('hashchange', pageview);
  d.addEventListener('click', click, true);
  d.addEventListener('auxclick', click, true);

  const queued = w.tally?.q || [];
  const tally: TallyFn = (name, options) => send(name, options);
  tally.ids = () => pending.then(() => ids);
  w.tally = tally;
  // A page prerendered for a link the visitor may never follow is counted when it is shown.
  if (d.prerendering) d.addEventListener('prerenderingchange', pageview, { once: true });
  else pageview();
  for (const [name, options] of queued) tally(name, options);
})(window, document, location);
