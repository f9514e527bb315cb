/*
 * Tally's public charts: small inline-SVG drawings for the share board and the widget card, with no
 * framework and no dependency. Everything is built with DOM calls (never innerHTML), so labels that
 * come from visitors' data (paths, referrers, campaign names) can never inject markup.
 */
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    setAll(node, attrs);
    append(node, children);
    return node;
  }

  function svg(tag, attrs, children) {
    var node = document.createElementNS(SVG, tag);
    setAll(node, attrs);
    append(node, children);
    return node;
  }

  // Bidirectional embeddings, overrides and isolates in visitor-sent text (a path, a campaign) reorder
  // what the board shows ("/bidi/" + U+202E + "evil" read "/bidi/live"): drawn as U+FFFD instead.
  var BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

  function setAll(node, attrs) {
    for (var k in attrs || {}) {
      if (attrs[k] === undefined || attrs[k] === null) continue;
      if (k === 'text') node.textContent = String(attrs[k]).replace(BIDI_CONTROLS, '\ufffd');
      // Styles go through the CSSOM: the pages' CSP forbids inline style attributes.
      else if (k === 'style') Object.assign(node.style, attrs[k]);
      else node.setAttribute(k, String(attrs[k]));
    }
  }

  function append(node, children) {
    (children || []).forEach(function (c) {
      if (c === null || c === undefined || c === false) return;
      node.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    });
  }

  function formatNumber(n) {
    if (typeof n !== 'number' || !isFinite(n)) return '0';
    return new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(n);
  }

  function formatMoney(cents, currency) {
    try {
      return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency || 'USD' }).format((cents || 0) / 100);
    } catch (e) {
      return formatNumber((cents || 0) / 100) + ' ' + (currency || '');
    }
  }

  function formatDuration(seconds) {
    var s = Math.round(seconds || 0);
    var m = Math.floor(s / 60);
    return m > 0 ? m + 'm ' + (s % 60) + 's' : s + 's';
  }

  /** A time series as bars, an area or a line. points: [{label, value}] */
  function series(points, opts) {
    opts = opts || {};
    var w = opts.width || 600;
    var h = opts.height || 160;
    var pad = 4;
    var max = Math.max.apply(null, [1].concat(points.map(function (p) { return p.value; })));
    var step = points.length > 0 ? (w - 2 * pad) / points.length : 0;
    var y = function (v) { return h - pad - ((h - 2 * pad) * v) / max; };
    var root = svg('svg', {
      class: 'chart chart-' + (opts.style || 'area'), viewBox: '0 0 ' + w + ' ' + h, preserveAspectRatio: 'none',
      role: 'img', 'aria-label': opts.title || 'chart', 'data-points': points.length, 'data-max': max,
    });
    if (opts.style === 'bar') {
      points.forEach(function (p, i) {
        var top = y(p.value);
        root.appendChild(svg('rect', {
          class: 'bar', x: (pad + i * step + step * 0.1).toFixed(2), y: top.toFixed(2), width: Math.max(1, step * 0.8).toFixed(2),
          height: Math.max(0, h - pad - top).toFixed(2), 'data-label': p.label, 'data-value': p.value,
        }, [svg('title', { text: p.label + ': ' + formatNumber(p.value) })]));
      });
      return root;
    }
    var coords = points.map(function (p, i) { return [pad + i * step + step / 2, y(p.value)]; });
    var line = coords.map(function (c, i) { return (i ? 'L' : 'M') + c[0].toFixed(2) + ' ' + c[1].toFixed(2); }).join(' ');
    if (coords.length > 0 && opts.style !== 'line') {
      var last = coords[coords.length - 1];
      root.appendChild(svg('path', { class: 'area', d: line + ' L' + last[0].toFixed(2) + ' ' + (h - pad) + ' L' + coords[0][0].toFixed(2) + ' ' + (h - pad) + ' Z' }));
    }
    root.appendChild(svg('path', { class: 'line', d: line || 'M0 0' }));
    points.forEach(function (p, i) {
      root.appendChild(svg('circle', { class: 'point', cx: coords[i][0].toFixed(2), cy: coords[i][1].toFixed(2), r: 1.5, 'data-label': p.label, 'data-value': p.value },
        [svg('title', { text: p.label + ': ' + formatNumber(p.value) })]));
    });
    return root;
  }

  /** A ranked list with proportional bars. rows: [{label, value, note?}] */
  function barList(rows, opts) {
    opts = opts || {};
    if (!rows || rows.length === 0) return empty(opts.empty || 'No data for this period.');
    var max = Math.max.apply(null, [1].concat(rows.map(function (r) { return r.value; })));
    return el('ol', { class: 'barlist' }, rows.map(function (r) {
      return el('li', { 'data-label': r.label, 'data-value': r.value }, [
        el('span', { class: 'fill', style: { width: ((100 * r.value) / max).toFixed(1) + '%' } }),
        el('span', { class: 'label', text: r.label }),
        el('span', { class: 'value', text: r.display || formatNumber(r.value) }),
        r.note ? el('span', { class: 'note', text: r.note }) : null,
      ]);
    }));
  }

  /** Day x hour grid (ISO day 1-7, hour 0-23); missing cells are empty. */
  function heatmap(cells) {
    var cell = 14, gap = 2, left = 30, top = 14;
    var max = Math.max.apply(null, [1].concat(cells.map(function (c) { return c.visitors; })));
    var root = svg('svg', { class: 'heatmap', viewBox: '0 0 ' + (left + 24 * (cell + gap)) + ' ' + (top + 7 * (cell + gap)), role: 'img', 'aria-label': 'Visitors by day and hour' });
    var days = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
    days.forEach(function (d, i) { root.appendChild(svg('text', { x: 0, y: top + i * (cell + gap) + cell - 3, class: 'axis', text: d })); });
    [0, 6, 12, 18].forEach(function (hr) { root.appendChild(svg('text', { x: left + hr * (cell + gap), y: 10, class: 'axis', text: hr + 'h' })); });
    var byKey = {};
    cells.forEach(function (c) { byKey[c.day + ':' + c.hour] = c; });
    for (var d = 1; d <= 7; d++) {
      for (var hr = 0; hr < 24; hr++) {
        var c = byKey[d + ':' + hr];
        var v = c ? c.visitors : 0;
        root.appendChild(svg('rect', {
          class: 'cell' + (c ? ' filled' : ''), x: left + hr * (cell + gap), y: top + (d - 1) * (cell + gap), width: cell, height: cell, rx: 2,
          'fill-opacity': c ? (0.15 + (0.85 * v) / max).toFixed(2) : 1, 'data-day': d, 'data-hour': hr, 'data-visitors': v,
        }, [svg('title', { text: days[d - 1] + ' ' + hr + ':00 · ' + formatNumber(v) + ' visitors' })]));
      }
    }
    return root;
  }

  /** Funnel steps as descending bars with the conversion from the first step. */
  function funnel(f) {
    return el('div', { class: 'funnel', 'data-funnel': f.name }, [
      el('h4', { text: f.name }),
      el('ol', { class: 'funnel-steps' }, f.steps.map(function (s) {
        var label = s.kind === 'payment' ? 'Payment' : (s.kind === 'goal' ? 'Goal: ' : 'Page: ') + (s.value || '');
        return el('li', { 'data-step': s.step, 'data-visitors': s.visitors }, [
          el('span', { class: 'fill', style: { width: Math.max(0, Math.min(100, s.conversion_from_first)).toFixed(1) + '%' } }),
          el('span', { class: 'label', text: label }),
          el('span', { class: 'value', text: formatNumber(s.visitors) + ' · ' + formatNumber(s.conversion_from_first) + '%' }),
        ]);
      })),
    ]);
  }

  function empty(message) {
    return el('p', { class: 'empty', text: message });
  }

  window.TallyCharts = {
    el: el, series: series, barList: barList, heatmap: heatmap, funnel: funnel, empty: empty,
    formatNumber: formatNumber, formatMoney: formatMoney, formatDuration: formatDuration,
  };
})();
