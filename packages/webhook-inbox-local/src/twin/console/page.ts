/**
 * The console's page (console/server.ts serves it): its style, its script and its markup, one
 * self-contained document, and the content security policy that lets only that style and script
 * run.
 */
import { createHash } from 'node:crypto';
import { DeliveryStatus } from '../../../../../lib/contract';

const STYLE = `
:root { color-scheme: light; --ink: #1d2433; --muted: #5d6778; --line: #dde2ea; --panel: #fff; --back: #f3f5f8;
  --ok: #1e7d32; --ok-back: #e6f4ea; --alarm: #c62828; --alarm-back: #fdecea; --unknown: #6b7280; --unknown-back: #eef0f3; --warn: #b26a00; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); background: var(--back); }
header { display: flex; align-items: baseline; gap: 16px; padding: 12px 24px; background: #232f3e; color: #fff; }
header h1 { margin: 0; font-size: 18px; font-weight: 600; }
header .meta { color: #c8d1dc; font-size: 12px; }
.connection { margin-left: auto; font-size: 12px; padding: 2px 8px; border-radius: 10px; background: #2e7d32; }
.connection[data-state="offline"] { background: var(--alarm); }
.connection[data-state="connecting"] { background: var(--unknown); }
.iam { margin-left: auto; font-size: 12px; padding: 2px 8px; border-radius: 10px; background: var(--unknown); }
.iam[data-state="denied"] { background: var(--alarm); }
.iam[data-state="clean"] { background: #2e7d32; }
.iam + .connection { margin-left: 0; }
main, .inboxes, .dashboards { display: grid; gap: 20px; grid-template-columns: minmax(0, 1fr); }
main { padding: 16px 24px 32px; }
h2 { margin: 0 0 8px; font-size: 16px; }
h3 { margin: 0; font-size: 14px; }
.summary { margin-left: 8px; font-size: 13px; font-weight: 600; color: var(--ok); }
.summary.firing { color: var(--alarm); }
section.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 14px 16px; }
.empty { color: var(--muted); font-style: italic; }
ul.alarms { list-style: none; margin: 0; padding: 0; display: grid; gap: 4px; grid-template-columns: minmax(0, 1fr); }
li.alarm { display: flex; gap: 12px; align-items: center; padding: 4px 10px; white-space: nowrap;
  border-radius: 4px; border-left: 6px solid var(--unknown); background: var(--unknown-back); }
.clip { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; }
li.alarm.state-ok { border-left-color: var(--ok); background: var(--ok-back); }
li.alarm.state-alarm { border-left-color: var(--alarm); background: var(--alarm-back); }
.badge { justify-self: start; font-size: 11px; font-weight: 700; letter-spacing: .04em; padding: 2px 8px; border-radius: 3px; color: #fff; background: var(--unknown); }
.state-ok .badge { background: var(--ok); }
.state-alarm .badge { background: var(--alarm); }
.badge { flex: none; min-width: 92px; text-align: center; }
.alarm-name { font-weight: 600; flex: none; }
.alarm-owner { color: var(--muted); font-weight: 400; }
.alarm-reason { color: var(--muted); flex: 1 1 0; }
li.alarm .when, li.alarm a { flex: none; }
li.alarm .when:first-of-type { margin-left: auto; }
.when { color: var(--muted); font-size: 12px; white-space: nowrap; }
a { color: #0b5cad; }
.inbox-head { display: flex; flex-wrap: wrap; gap: 10px; align-items: stretch; margin-bottom: 12px; }
.tiles { display: flex; flex-wrap: wrap; gap: 10px; }
.tile { border: 1px solid var(--line); border-radius: 4px; padding: 6px 12px; min-width: 96px; background: #fafbfc; }
.tile .count { display: block; font-size: 22px; font-weight: 600; }
.tile .label { font-size: 11px; color: var(--muted); letter-spacing: .04em; white-space: nowrap; }
.tile.dead-letter { max-width: 100%; min-width: 0; overflow: hidden; }
.tile.dead-letter .label { display: flex; gap: 4px; align-items: baseline; min-width: 0; }
.tile.bad { border-color: var(--alarm); background: var(--alarm-back); }
.tile.bad .count { color: var(--alarm); }
.tile.warn .count { color: var(--warn); }
.tile.dead-letter { margin-left: auto; }
.providers { display: grid; gap: 12px; }
.provider { border-top: 1px solid var(--line); padding-top: 10px; }
.provider-head { display: flex; gap: 12px; align-items: baseline; margin-bottom: 6px; }
code { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; background: #eef1f5; padding: 1px 5px; border-radius: 3px; }
code.clip { display: inline-block; max-width: 100%; vertical-align: bottom; }
.provider-head h3, h2 { white-space: nowrap; }
.provider-head code { min-width: 0; }
table { width: 100%; border-collapse: collapse; font-size: 13px; table-layout: fixed; }
th:nth-child(1) { width: 90px; }
th:nth-child(2) { width: 70px; }
th:nth-child(4) { width: 26%; }
th { text-align: left; font-weight: 600; color: var(--muted); font-size: 11px; letter-spacing: .04em; border-bottom: 1px solid var(--line); padding: 4px 8px; }
td { border-bottom: 1px solid #eef1f5; padding: 4px 8px; vertical-align: top; }
td.reason, td.request-id { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
td.request-id { color: var(--muted); font: 12px ui-monospace, "DejaVu Sans Mono", monospace; }
.status { font-weight: 700; }
.status-2xx { color: var(--ok); }
.status-4xx { color: var(--warn); }
.status-5xx { color: var(--alarm); }
.widgets { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(440px, 100%), 1fr)); gap: 12px; }
.widget h3 { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.widget { border: 1px solid var(--line); border-radius: 4px; padding: 8px 10px; }
.widget h3 { margin-bottom: 4px; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart .grid { stroke: #e6e9ef; stroke-width: 1; }
svg.chart .axis-label { fill: var(--muted); font-size: 10px; }
svg.chart .no-data { fill: var(--muted); font-size: 12px; font-style: italic; }
svg.chart polyline { fill: none; stroke-width: 1.6; }
ul.legend { list-style: none; margin: 4px 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: 2px 12px; font-size: 12px; }
ul.legend li { display: flex; align-items: center; gap: 4px; }
ul.legend li.not-drawn { color: var(--muted); font-style: italic; }
`;

const SCRIPT = `
'use strict';
var SNAPSHOT_URL = '/console/api/snapshot';
var FLOW_URL = '/console/api/flow';
var POLL_MS = 1000;
var SVG = 'http://www.w3.org/2000/svg';
var COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#ad494a'];
var STATE_ORDER = { ALARM: 0, INSUFFICIENT_DATA: 1, OK: 2 };
var STATE_CLASS = { ALARM: 'state-alarm', INSUFFICIENT_DATA: 'state-insufficient', OK: 'state-ok' };
var ROW_STATUS_ORDER = ${JSON.stringify([DeliveryStatus.RECEIVED, DeliveryStatus.PROCESSING, DeliveryStatus.PROCESSED, 'FAILED', DeliveryStatus.DEAD])};
var BAD_ROW_STATUSES = ${JSON.stringify({ FAILED: true, [DeliveryStatus.DEAD]: true })};
var WAITING_ROW_STATUS = ${JSON.stringify(DeliveryStatus.RECEIVED)};
var CHART = { width: 560, height: 190, left: 46, right: 46, top: 10, bottom: 22 };
// The text each section was last drawn from: a section is redrawn only when it changed, so a
// selection or a hover in the others survives the refresh.
var drawn = {};

// Every text goes in through append (a text node) or setAttribute: nothing is parsed as markup.
function el(tag, attributes) {
  var node = document.createElement(tag);
  setAttributes(node, attributes);
  for (var i = 2; i < arguments.length; i++) appendChild(node, arguments[i]);
  return node;
}
function svg(tag, attributes) {
  var node = document.createElementNS(SVG, tag);
  setAttributes(node, attributes);
  for (var i = 2; i < arguments.length; i++) appendChild(node, arguments[i]);
  return node;
}
function setAttributes(node, attributes) {
  Object.keys(attributes || {}).forEach(function (name) {
    if (attributes[name] !== undefined && attributes[name] !== null) node.setAttribute(name, String(attributes[name]));
  });
}
function appendChild(node, child) {
  if (child === undefined || child === null || child === false) return;
  if (Array.isArray(child)) child.forEach(function (each) { appendChild(node, each); });
  else node.append(child instanceof Node ? child : String(child));
}

function fill(id, content) {
  var node = document.getElementById(id);
  node.replaceChildren();
  appendChild(node, content);
}

function pad(n) { return String(n).padStart(2, '0'); }
function clock(ms) { var d = new Date(ms); return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds()); }
function time(iso) {
  var ms = Date.parse(iso);
  return el('time', { datetime: iso, title: iso, class: 'when' }, isNaN(ms) ? String(iso) : clock(ms));
}
function compact(value) {
  var size = Math.abs(value);
  if (size >= 1e6) return (value / 1e6).toFixed(1).replace(/\\.0$/, '') + 'M';
  if (size >= 1e3) return (value / 1e3).toFixed(1).replace(/\\.0$/, '') + 'k';
  return String(Math.round(value * 100) / 100);
}
// A runbook is linked only when it is an absolute http(s) URL: a javascript: or data: URL in a
// template stays text, and so does a path (a file of the installed package, not one the twin serves).
function safeLink(target) {
  try {
    if (!/^https?:[/][/]/i.test(target)) return null;
    var url = new URL(target);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch (error) {
    return null;
  }
}

// One line: the state, the name the runbook uses (with its inbox when there are several), why
// only when it is in ALARM (cut short, the whole reason in its tooltip), since when, the runbook.
function alarmItem(alarm, showOwner) {
  var link = alarm.runbook ? safeLink(alarm.runbook) : null;
  return el('li', { class: 'alarm ' + (STATE_CLASS[alarm.state] || 'state-insufficient'), 'data-testid': 'alarm', 'data-alarm': alarm.name, 'data-label': alarm.label, 'data-state': alarm.state, title: alarm.name },
    el('span', { class: 'badge', 'data-testid': 'alarm-state' }, alarm.state === 'INSUFFICIENT_DATA' ? 'NO DATA' : alarm.state),
    el('span', { class: 'alarm-name', 'data-testid': 'alarm-name' }, showOwner && alarm.owner ? el('span', { class: 'alarm-owner' }, alarm.owner + ' ') : null, alarm.label),
    alarm.state === 'ALARM' ? el('span', { class: 'alarm-reason clip', 'data-testid': 'alarm-reason', title: alarm.reason }, alarm.reason) : null,
    el('span', { class: 'when' }, 'since ', time(alarm.updatedAt)),
    alarm.runbook
      ? link
        ? el('a', { href: link, target: '_blank', rel: 'noopener noreferrer', 'data-testid': 'alarm-runbook' }, 'runbook')
        : el('span', { class: 'when clip', 'data-testid': 'alarm-runbook', title: alarm.runbook }, alarm.runbook)
      : el('span'));
}

function drawAlarms(alarms) {
  var sorted = alarms.slice().sort(function (a, b) {
    return ((STATE_ORDER[a.state] ?? 1) - (STATE_ORDER[b.state] ?? 1)) || (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0) || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0);
  });
  var owners = alarms.map(function (alarm) { return alarm.owner; }).filter(function (owner, index, all) { return all.indexOf(owner) === index; });
  var firing = alarms.filter(function (alarm) { return alarm.state === 'ALARM'; }).length;
  document.title = (firing > 0 ? '(' + firing + ' in ALARM) ' : '') + 'Webhook inbox console';
  var summary = document.getElementById('alarm-summary');
  var waiting = alarms.filter(function (alarm) { return alarm.state !== 'ALARM' && alarm.state !== 'OK'; }).length;
  summary.textContent = firing > 0 ? firing + ' in ALARM' : waiting > 0 ? waiting + ' without enough data' : alarms.length > 0 ? 'all OK' : '';
  summary.setAttribute('class', firing > 0 ? 'summary firing' : 'summary');
  fill('alarms',
    sorted.length > 0 ? el('ul', { class: 'alarms' }, sorted.map(function (alarm) { return alarmItem(alarm, owners.length > 1); })) : el('p', { class: 'empty' }, 'No alarms in the template.'));
}

function statusTile(status, count) {
  var tone = BAD_ROW_STATUSES[status] && count > 0 ? ' bad' : status === WAITING_ROW_STATUS && count > 0 ? ' warn' : '';
  return el('div', { class: 'tile' + tone, 'data-testid': 'row-count', 'data-status': status, 'data-count': count },
    el('span', { class: 'count' }, compact(count)), el('span', { class: 'label' }, status));
}

function deliveryRow(delivery) {
  var family = Math.floor(Number(delivery.status) / 100);
  return el('tr', { 'data-testid': 'delivery', 'data-status': delivery.status },
    el('td', {}, time(delivery.at)),
    el('td', { class: 'status status-' + family + 'xx', 'data-testid': 'delivery-status' }, delivery.status),
    el('td', { class: 'reason', 'data-testid': 'delivery-reason', title: delivery.reason }, delivery.reason),
    el('td', { class: 'request-id', 'data-testid': 'delivery-request-id', title: delivery.requestId || '' }, delivery.requestId || ''));
}

function providerSection(name, url, deliveries) {
  return el('section', { class: 'provider', 'data-testid': 'provider', 'data-provider': name },
    el('div', { class: 'provider-head' }, el('h3', {}, name), url ? el('code', { class: 'clip', 'data-testid': 'provider-url', title: 'POST ' + url }, 'POST ' + url) : null),
    deliveries.length > 0
      ? el('table', { 'data-testid': 'deliveries' },
          el('thead', {}, el('tr', {}, el('th', {}, 'AT'), el('th', {}, 'STATUS'), el('th', {}, 'REASON'), el('th', {}, 'REQUEST ID'))),
          el('tbody', {}, deliveries.map(deliveryRow)))
      : el('p', { class: 'empty', 'data-testid': 'no-deliveries' }, 'No deliveries yet.'));
}

function inboxSection(inbox) {
  var statuses = Object.keys(inbox.rowsByStatus).sort(function (a, b) {
    var ia = ROW_STATUS_ORDER.indexOf(a), ib = ROW_STATUS_ORDER.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || (a < b ? -1 : 1);
  });
  var depth = inbox.deadLetter.depth;
  // Deliveries on a route no provider of the inbox names are still shown, under that route.
  var names = inbox.providers.map(function (provider) { return provider.name; });
  inbox.deliveries.forEach(function (delivery) { if (names.indexOf(delivery.provider) < 0) names.push(delivery.provider); });
  return el('section', { class: 'panel inbox', 'data-testid': 'inbox', 'data-inbox': inbox.name },
    el('h2', {}, 'Inbox ', inbox.name),
    el('div', { class: 'inbox-head' },
      el('div', { class: 'tiles', 'data-testid': 'rows-by-status' },
        statuses.length > 0 ? statuses.map(function (status) { return statusTile(status, inbox.rowsByStatus[status]); }) : el('span', { class: 'empty' }, 'No rows yet.')),
      el('div', { class: 'tile dead-letter' + (depth > 0 ? ' bad' : ''), 'data-testid': 'dead-letter', 'data-depth': depth, title: inbox.deadLetter.queue },
        el('span', { class: 'count', 'data-testid': 'dead-letter-depth' }, compact(depth)),
        el('span', { class: 'label' }, 'IN DEAD-LETTER QUEUE', el('code', { class: 'clip' }, inbox.deadLetter.queue))),
      inbox.flow ? flowTile(inbox.name, inbox.flow) : null),
    el('div', { class: 'providers' }, names.map(function (name) {
      var provider = inbox.providers.find(function (each) { return each.name === name; });
      return providerSection(name, provider && provider.url, inbox.deliveries.filter(function (delivery) { return delivery.provider === name; }));
    })));
}

/** Paused or running, the breaker, and the button that pauses or resumes (what \`webhook-inbox pause\` and \`resume\` do). */
function flowTile(name, flow) {
  var held = flow.pausedSince !== null || flow.breaker !== 'CLOSED';
  var state = flow.pausedSince !== null ? 'PAUSED' : 'RUNNING';
  var since = flow.pausedSince !== null ? 'since ' + flow.pausedSince : '';
  var breaker = 'BREAKER ' + flow.breaker + (flow.breaker !== 'CLOSED' ? ' since ' + flow.openedAt : '');
  var action = flow.pausedSince !== null || flow.breaker !== 'CLOSED' ? 'resume' : 'pause';
  var button = el('button', { type: 'button', 'data-testid': 'flow-' + action }, action === 'pause' ? 'Pause' : 'Resume');
  button.addEventListener('click', function () {
    button.disabled = true;
    fetch(FLOW_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ inbox: name, action: action }) })
      .catch(function () { return undefined; })
      .then(function () { button.disabled = false; });
  });
  return el('div', { class: 'tile flow' + (held ? ' bad' : ''), 'data-testid': 'flow', 'data-paused': String(flow.pausedSince !== null), 'data-breaker': flow.breaker, title: flow.reason || '' },
    el('span', { class: 'count', 'data-testid': 'flow-state' }, state),
    el('span', { class: 'label' }, since, el('code', { class: 'clip', 'data-testid': 'flow-breaker' }, breaker)),
    button);
}

function drawInboxes(inboxes) {
  fill('inboxes',
    inboxes.length > 0 ? inboxes.map(inboxSection) : el('section', { class: 'panel' }, el('p', { class: 'empty' }, 'No inbox in the template.')));
}

// The top of an axis of four gridlines, each a round step apart.
function niceCeiling(value) {
  if (!(value > 0)) return 1;
  var quarter = value / 4;
  var power = Math.pow(10, Math.floor(Math.log10(quarter)));
  var steps = [1, 2, 2.5, 3, 4, 5, 6, 8, 10];
  for (var i = 0; i < steps.length; i++) if (steps[i] * power >= quarter) return 4 * steps[i] * power;
  return 40 * power;
}

function chart(widget) {
  var lines = widget.series.map(function (series, index) { return { series: series, color: COLORS[index % COLORS.length] }; })
    .filter(function (line) { return !line.series.notDrawn && line.series.points.length > 0; });
  var root = svg('svg', { class: 'chart', viewBox: '0 0 ' + CHART.width + ' ' + CHART.height, role: 'img', 'aria-label': widget.title, 'data-testid': 'chart' });
  var plotWidth = CHART.width - CHART.left - CHART.right, plotHeight = CHART.height - CHART.top - CHART.bottom;
  for (var g = 0; g <= 4; g++) {
    var gy = CHART.top + (plotHeight * g) / 4;
    root.append(svg('line', { class: 'grid', x1: CHART.left, x2: CHART.width - CHART.right, y1: gy, y2: gy }));
  }
  if (lines.length === 0) {
    root.append(svg('text', { class: 'no-data', x: CHART.width / 2, y: CHART.height / 2, 'text-anchor': 'middle' }, 'No data points yet'));
    return root;
  }
  var from = Infinity, to = -Infinity, top = { left: 0, right: 0 };
  lines.forEach(function (line) {
    var axis = line.series.rightAxis ? 'right' : 'left';
    line.series.points.forEach(function (point) {
      from = Math.min(from, point[0]); to = Math.max(to, point[0]); top[axis] = Math.max(top[axis], point[1]);
    });
  });
  if (to === from) { from -= 30000; to += 30000; }
  var ceiling = { left: niceCeiling(top.left), right: niceCeiling(top.right) };
  var hasRight = lines.some(function (line) { return line.series.rightAxis; });
  var x = function (ms) { return CHART.left + ((ms - from) / (to - from)) * plotWidth; };
  var y = function (value, axis) { return CHART.top + plotHeight - (Math.max(0, value) / ceiling[axis]) * plotHeight; };
  for (var t = 0; t <= 4; t++) {
    var ty = CHART.top + plotHeight - (plotHeight * t) / 4 + 3;
    root.append(svg('text', { class: 'axis-label', x: CHART.left - 6, y: ty, 'text-anchor': 'end' }, compact((ceiling.left * t) / 4)));
    if (hasRight) root.append(svg('text', { class: 'axis-label', x: CHART.width - CHART.right + 6, y: ty }, compact((ceiling.right * t) / 4)));
  }
  [from, (from + to) / 2, to].forEach(function (ms, index) {
    root.append(svg('text', { class: 'axis-label', x: x(ms), y: CHART.height - 6, 'text-anchor': ['start', 'middle', 'end'][index] }, clock(ms)));
  });
  lines.forEach(function (line) {
    var axis = line.series.rightAxis ? 'right' : 'left';
    var points = line.series.points.map(function (point) { return x(point[0]).toFixed(1) + ',' + y(point[1], axis).toFixed(1); }).join(' ');
    var last = line.series.points[line.series.points.length - 1];
    root.append(svg('polyline', { points: points, stroke: line.color, 'data-testid': 'series-line', 'data-label': line.series.label }, svg('title', {}, line.series.label)));
    root.append(svg('circle', { cx: x(last[0]), cy: y(last[1], axis), r: 2.5, fill: line.color },
      svg('title', {}, line.series.label + ': ' + last[1] + ' at ' + clock(last[0]))));
  });
  return root;
}

function legend(widget) {
  return el('ul', { class: 'legend' }, widget.series.map(function (series, index) {
    var swatch = svg('svg', { width: 14, height: 8, viewBox: '0 0 14 8' },
      svg('line', { x1: 0, x2: 14, y1: 4, y2: 4, stroke: COLORS[index % COLORS.length], 'stroke-width': 3, 'stroke-dasharray': series.notDrawn ? '3 2' : null }));
    return el('li', { class: series.notDrawn ? 'not-drawn' : '', 'data-testid': 'series', 'data-label': series.label, title: series.notDrawn || '' },
      swatch, series.label, series.rightAxis ? ' (right)' : '', series.notDrawn ? ' — not drawn locally' : '');
  }));
}

function drawDashboards(dashboards) {
  fill('dashboards',
    dashboards.length > 0
      ? dashboards.map(function (dashboard) {
          return el('section', { class: 'panel dashboard', 'data-testid': 'dashboard', 'data-dashboard': dashboard.name },
            el('h2', {}, 'Dashboard ', dashboard.name),
            el('div', { class: 'widgets' }, dashboard.widgets.map(function (widget) {
              return el('div', { class: 'widget', 'data-testid': 'widget', 'data-title': widget.title }, el('h3', {}, widget.title), chart(widget), legend(widget));
            })));
        })
      : el('section', { class: 'panel' }, el('p', { class: 'empty' }, 'No dashboard in the template.')));
}

function drawSection(name, value, draw) {
  var text = JSON.stringify(value);
  if (drawn[name] === text) return;
  drawn[name] = text;
  draw(value);
}

function drawIam(iam) {
  var node = document.getElementById('iam-denials');
  var counts = iam ? Object.entries(iam.deniedByFunction) : [];
  var total = counts.reduce(function (sum, entry) { return sum + entry[1]; }, 0);
  node.setAttribute('data-state', !iam || !iam.enforced ? 'off' : total > 0 ? 'denied' : 'clean');
  node.title = counts.map(function (entry) { return entry[0] + ': ' + entry[1]; }).join('\\n');
  node.textContent = !iam || !iam.enforced ? 'IAM not enforced' : total === 1 ? 'IAM: 1 AWS call denied' : 'IAM: ' + total + ' AWS calls denied';
}

function draw(snapshot) {
  document.getElementById('generated-at').replaceChildren('snapshot ', time(snapshot.generatedAt));
  drawIam(snapshot.iam);
  drawSection('alarms', snapshot.alarms, drawAlarms);
  drawSection('inboxes', snapshot.inboxes, drawInboxes);
  drawSection('dashboards', snapshot.dashboards, drawDashboards);
}

function connection(state, text) {
  var node = document.getElementById('connection');
  node.setAttribute('data-state', state);
  node.textContent = text;
}

function poll() {
  fetch(SNAPSHOT_URL, { cache: 'no-store' })
    .then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) throw new Error(body && body.message ? body.message : 'HTTP ' + response.status);
        return body;
      });
    })
    .then(function (snapshot) { draw(snapshot); connection('live', 'live'); })
    .catch(function (error) { connection('offline', 'offline: ' + error.message); })
    .then(function () { setTimeout(poll, POLL_MS); });
}
poll();
`;

export const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Webhook inbox console</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>Webhook inbox console</h1>
<span class="meta" data-testid="generated-at" id="generated-at">waiting for the first snapshot</span>
<span class="iam" data-testid="iam-denials" id="iam-denials" data-state="off"></span>
<span class="connection" data-testid="connection" id="connection" data-state="connecting">connecting</span>
</header>
<main>
<div id="inboxes" class="inboxes" data-testid="inboxes"></div>
<section class="panel" data-testid="alarms-panel">
<h2>Alarms <span class="summary" data-testid="alarm-summary" id="alarm-summary"></span></h2>
<div id="alarms"></div>
</section>
<div id="dashboards" class="dashboards" data-testid="dashboards"></div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;

/** Only the page's own style and script run: a text that slipped through as markup could do nothing. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src '${sha256(SCRIPT)}'`,
  `style-src '${sha256(STYLE)}'`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function sha256(text: string): string {
  return `sha256-${createHash('sha256').update(text).digest('base64')}`;
}
