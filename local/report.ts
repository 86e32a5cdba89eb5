/**
 * The page `ecsr local --report FILE` writes: one self-contained HTML file (inline CSS, SVG and a
 * few lines of script; nothing fetched), drawn from {@link buildTimeline}. At the top, "Why not
 * converged": per service its phase at the end, tasks, the whole reason and since when. Then per
 * service a chart: ECS's desired count (line), running tasks (area) and pending ones (lighter area
 * above them) over simulated time, the phase of each pass as a band under it, and a lane of
 * markers per kind above it (actions, drift corrections, failures, alarm transitions, changes by
 * hand), each with its whole sentence as a tooltip and in the list of events under the chart.
 * The legend's kinds are also switches that hide and show their markers; hovering or focusing a
 * marker shows its sentence in the chart's detail line and highlights its row in the list.
 *
 * The charts are SVG drawn here rather than by a charting library: the markers must be elements
 * with their text (for screen readers, and for a test to read), and the canvas-based libraries
 * draw pixels; see docs/DECISIONS.md ("The run report").
 */
import { renameSync, writeFileSync } from 'node:fs';
import type { AlarmState } from '../lambda/core/alarms';
import { serviceId } from '../lambda/core/types';
import { BASE_CSS, escapeHtml, phaseColor, phaseTag, PHASE_COLOR, whyCaption, whyTable as renderWhyTable, type WhyRow } from './html';
import { STEPS, type ExpectationResult } from './scenario';
import {
  buildTimeline,
  MARKER_KINDS,
  type CountSample,
  type Marker,
  type MarkerKind,
  type PhaseSpan,
  type RunTimeline,
  type ServiceTimeline,
  type TimelineModel,
} from './timeline';

/** What the page says about the run besides the timeline. */
export interface ReportHeader {
  /** `ecsr local: the scripted scenario`, `ecsr local --forever`. */
  readonly title: string;
  /** One line each: `seed 1, 13x`, `14 passes`. */
  readonly facts: readonly string[];
  /** The scenario's verdicts, empty with --forever. */
  readonly expectations?: readonly { readonly description: string; readonly ok: boolean; readonly detail: string }[];
  /** True while the run goes on (a --forever page rewritten after each pass). */
  readonly running?: boolean;
}

const KIND_LABEL: Readonly<Record<MarkerKind, string>> = {
  action: 'action applied',
  drift: 'drift corrected',
  failure: 'failure',
  alarm: 'alarm transition',
  step: 'change by hand',
};

export { escapeHtml };

/** `+5m00s`, `+1h02m00s`: simulated time since the start. */
export function offsetLabel(at: Date, startedAt: Date): string {
  const s = Math.max(0, Math.round((at.getTime() - startedAt.getTime()) / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `+${h}h${String(m).padStart(2, '0')}m${sec}s` : `+${m}m${sec}s`;
}

// Geometry of a chart, in SVG user units (the SVG scales to the page's width).
const W = 960;
const LEFT = 44;
const RIGHT = 16;
const LANE = 16;
const LANES_TOP = 6;
const PLOT_H = 150;
const BAND_H = 12;
const PLOT_W = W - LEFT - RIGHT;

/** A minute step for the time axis that gives at most about 12 ticks. */
function tickMinutes(spanSeconds: number): number {
  const minutes = spanSeconds / 60;
  return [1, 2, 5, 10, 15, 30, 60, 120, 240, 480, 1440].find((m) => minutes / m <= 12) ?? 1440;
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/** The time scale of every chart of the page (the same for all, so they line up). */
function timeScale(model: TimelineModel): (at: Date) => number {
  const t0 = model.startedAt.getTime();
  const span = Math.max(60_000, model.endedAt.getTime() - t0);
  return (at) => LEFT + (Math.min(Math.max(at.getTime() - t0, 0), span) / span) * PLOT_W;
}

/** Step path of one count over time, from the first sample to the end. */
function stepPoints(counts: readonly CountSample[], value: (s: CountSample) => number, x: (d: Date) => number, y: (n: number) => number, end: Date): string {
  if (counts.length === 0) return '';
  let d = `M${fmt(x(counts[0].at))},${fmt(y(value(counts[0])))}`;
  for (let i = 1; i < counts.length; i++) d += `H${fmt(x(counts[i].at))}V${fmt(y(value(counts[i])))}`;
  return `${d}H${fmt(x(end))}`;
}

/** Closed area between `lower` and `upper` counts, as a step function. */
function stepArea(counts: readonly CountSample[], lower: (s: CountSample) => number, upper: (s: CountSample) => number, x: (d: Date) => number, y: (n: number) => number, end: Date): string {
  if (counts.length === 0) return '';
  const seg = counts.map((c, i) => ({ x0: x(c.at), x1: x(counts[i + 1]?.at ?? end), lo: y(lower(c)), up: y(upper(c)) }));
  const top = seg.map((s) => `${fmt(s.x0)},${fmt(s.up)} ${fmt(s.x1)},${fmt(s.up)}`).join(' ');
  const bottom = [...seg].reverse().map((s) => `${fmt(s.x1)},${fmt(s.lo)} ${fmt(s.x0)},${fmt(s.lo)}`).join(' ');
  return `M${top} ${bottom}Z`;
}

/** A marker's shape, centred on (cx, cy). */
function markerShape(kind: MarkerKind, cx: number, cy: number, to?: AlarmState): string {
  const r = 5;
  switch (kind) {
    case 'action':
      return `<circle cx="${fmt(cx)}" cy="${fmt(cy)}" r="${r}" class="m-action"/>`;
    case 'drift':
      return `<path d="M${fmt(cx)},${fmt(cy - r - 1)}l${r + 1},${r + 1}l${-r - 1},${r + 1}l${-r - 1},${-r - 1}Z" class="m-drift"/>`;
    case 'failure':
      return `<path d="M${fmt(cx - r)},${fmt(cy - r)}l${2 * r},${2 * r}M${fmt(cx + r)},${fmt(cy - r)}l${-2 * r},${2 * r}" class="m-failure"/>`;
    case 'alarm':
      return `<rect x="${fmt(cx - r)}" y="${fmt(cy - r)}" width="${2 * r}" height="${2 * r}" class="m-alarm ${to === 'ALARM' ? 'to-alarm' : 'to-ok'}"/>`;
    case 'step':
      return `<path d="M${fmt(cx - r)},${fmt(cy - r)}h${2 * r}l${-r},${2 * r}Z" class="m-step"/>`;
  }
}

/** Least distance between two markers' centres in a lane; closer ones are set side by side. */
const MARKER_GAP = 11;

/**
 * The lanes of markers and a faint rule down through the plot for each, at the marker's time. Two
 * markers of a lane closer than {@link MARKER_GAP} (two actions of one pass) are drawn side by
 * side, the later one to the right; the rule stays at the time.
 */
function markerLanes(markers: readonly Marker[], x: (d: Date) => number, idPrefix: string, plotBottom: number, startedAt: Date): string {
  const out: string[] = [];
  MARKER_KINDS.forEach((kind, lane) => {
    const cy = LANES_TOP + lane * LANE + LANE / 2;
    let lastCx = -Infinity;
    out.push(`<text x="${LEFT - 6}" y="${fmt(cy + 3)}" class="lane" text-anchor="end">${escapeHtml(kind)}</text>`);
    markers.forEach((m, i) => {
      if (m.kind !== kind) return;
      const at = x(m.at);
      const cx = Math.max(at, lastCx + MARKER_GAP);
      lastCx = cx;
      const label = `${offsetLabel(m.at, startedAt)} ${m.text}`;
      out.push(
        `<g class="marker" data-kind="${kind}" data-ref="${idPrefix}-${i}" tabindex="0" role="img" aria-label="${escapeHtml(`${KIND_LABEL[kind]}: ${label}`)}">` +
          `<title>${escapeHtml(label)}</title>` +
          `<line x1="${fmt(at)}" x2="${fmt(at)}" y1="${fmt(cy + 6)}" y2="${fmt(plotBottom)}" class="rule"/>` +
          markerShape(kind, cx, cy, m.to) +
          `</g>`,
      );
    });
  });
  return out.join('');
}

function timeAxis(model: TimelineModel, x: (d: Date) => number, top: number, bottom: number): string {
  const t0 = model.startedAt.getTime();
  const spanS = Math.max(60, (model.endedAt.getTime() - t0) / 1000);
  const step = tickMinutes(spanS) * 60;
  const out: string[] = [];
  for (let s = 0; s <= spanS + 0.5; s += step) {
    const at = new Date(t0 + s * 1000);
    const px = x(at);
    out.push(`<line x1="${fmt(px)}" x2="${fmt(px)}" y1="${top}" y2="${bottom}" class="grid"/>`);
    out.push(`<text x="${fmt(px)}" y="${bottom + 13}" text-anchor="middle" class="tick">${offsetLabel(at, model.startedAt).replace(/00s$/, '')}</text>`);
  }
  return out.join('');
}

function countAxis(maxY: number, y: (n: number) => number): string {
  const step = Math.max(1, Math.ceil(maxY / 5));
  const out: string[] = [];
  for (let n = 0; n <= maxY; n += step) {
    out.push(`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${fmt(y(n))}" y2="${fmt(y(n))}" class="grid"/>`);
    out.push(`<text x="${LEFT - 6}" y="${fmt(y(n) + 4)}" text-anchor="end" class="tick">${n}</text>`);
  }
  return out.join('');
}

function phaseBand(spans: readonly PhaseSpan[], x: (d: Date) => number, top: number, startedAt: Date): string {
  return spans
    .map((s) => {
      const x0 = x(s.from);
      const width = Math.max(1, x(s.to) - x0);
      const text = `${s.phase} ${offsetLabel(s.from, startedAt)} to ${offsetLabel(s.to, startedAt)}${s.reason ? `: ${s.reason}` : ''}`;
      return `<rect x="${fmt(x0)}" y="${top}" width="${fmt(width)}" height="${BAND_H}" fill="${phaseColor(s.phase)}" class="phase" data-phase="${escapeHtml(s.phase)}"><title>${escapeHtml(text)}</title></rect>`;
    })
    .join('');
}

/** The list under a chart: every marker with its time, kind and sentence (rows share the markers' `data-ref`). */
function eventList(markers: readonly Marker[], prefix: string, startedAt: Date): string {
  if (markers.length === 0) return '<p class="none">No events.</p>';
  const rows = markers
    .map(
      (m, i) =>
        `<tr data-kind="${m.kind}" data-ref="${prefix}-${i}"><td class="t">${offsetLabel(m.at, startedAt)}</td><td><span class="k k-${m.kind}">${escapeHtml(KIND_LABEL[m.kind])}</span></td><td>${escapeHtml(m.text)}</td></tr>`,
    )
    .join('');
  return `<details open><summary>${markers.length} events</summary><table class="events"><thead><tr><th>time</th><th>kind</th><th>what happened</th></tr></thead><tbody>${rows}</tbody></table></details>`;
}

/** One service's chart, its detail line and its list of events. */
function serviceSection(svc: ServiceTimeline, n: number, model: TimelineModel): string {
  const x = timeScale(model);
  const plotTop = LANES_TOP + MARKER_KINDS.length * LANE + 6;
  const plotBottom = plotTop + PLOT_H;
  const bandTop = plotBottom + 4;
  const height = bandTop + BAND_H + 20;
  const maxY = Math.max(1, ...svc.counts.map((c) => Math.max(c.desired, c.running + c.pending)));
  const y = (v: number) => plotBottom - (v / maxY) * PLOT_H;
  const prefix = `s${n}`;
  const titleId = `${prefix}-title`;
  const descId = `${prefix}-desc`;
  const end = model.endedAt;
  const summary = `${svc.final.phase}${svc.final.running !== undefined ? `, ${svc.final.running}/${svc.final.desired} running` : ''}${svc.final.reason ? `: ${svc.final.reason}` : ''}`;
  const svg = [
    `<svg viewBox="0 0 ${W} ${height}" role="group" aria-labelledby="${titleId}" aria-describedby="${descId}" class="chart">`,
    `<title id="${titleId}">${escapeHtml(svc.id)}: desired and running tasks over simulated time</title>`,
    `<desc id="${descId}">${escapeHtml(`${svc.markers.length} markers. At the end: ${summary}`)}</desc>`,
    timeAxis(model, x, plotTop, bandTop + BAND_H),
    countAxis(maxY, y),
    `<path d="${stepArea(svc.counts, () => 0, (c) => c.running, x, y, end)}" class="running"><title>running tasks</title></path>`,
    `<path d="${stepArea(svc.counts, (c) => c.running, (c) => c.running + c.pending, x, y, end)}" class="pending"><title>pending tasks</title></path>`,
    `<path d="${stepPoints(svc.counts, (c) => c.desired, x, y, end)}" class="desired"><title>desired count (ECS)</title></path>`,
    phaseBand(svc.phases, x, bandTop, model.startedAt),
    markerLanes(svc.markers, x, prefix, plotBottom, model.startedAt),
    `</svg>`,
  ].join('');
  return [
    `<section class="service" id="service-${n}" data-service="${escapeHtml(svc.id)}">`,
    `<h2>${escapeHtml(svc.id)} ${phaseTag(svc.final.phase)}</h2>`,
    svg,
    `<p class="detail" aria-live="polite" data-default="${escapeHtml(summary)}">${escapeHtml(summary)}</p>`,
    eventList(svc.markers, prefix, model.startedAt),
    `</section>`,
  ].join('');
}

function reconcilerSection(model: TimelineModel): string {
  if (model.reconciler.length === 0) return '';
  const x = timeScale(model);
  const height = LANES_TOP + MARKER_KINDS.length * LANE + 26;
  const bottom = LANES_TOP + MARKER_KINDS.length * LANE + 4;
  return [
    `<section class="service reconciler" id="reconciler">`,
    `<h2>The reconciler</h2>`,
    `<svg viewBox="0 0 ${W} ${height}" role="group" aria-labelledby="r-title" class="chart">`,
    `<title id="r-title">The reconciler's alarms and passes over simulated time</title>`,
    timeAxis(model, x, LANES_TOP, bottom),
    markerLanes(model.reconciler, x, 'r', bottom, model.startedAt),
    `</svg>`,
    `<p class="detail" aria-live="polite" data-default="Alarms as a whole and passes that did not complete.">Alarms as a whole and passes that did not complete.</p>`,
    eventList(model.reconciler, 'r', model.startedAt),
    `</section>`,
  ].join('');
}

function whyTable(model: TimelineModel): string {
  const services = [...model.services].sort((a, b) => Number(a.final.notConvergedSince === undefined) - Number(b.final.notConvergedSince === undefined) || (a.id < b.id ? -1 : 1));
  const notConverged = services.filter((s) => s.final.notConvergedSince !== undefined).length;
  const rows: WhyRow[] = services.map((s) => {
    const n = model.services.indexOf(s);
    const tasks = s.final.running !== undefined ? `${s.final.running}/${s.final.desired}` : '-';
    const since = s.final.notConvergedSince ? offsetLabel(s.final.notConvergedSince, model.startedAt) : '-';
    return {
      service: s.id,
      open: s.final.notConvergedSince !== undefined,
      cells: [
        { html: `<a href="#service-${n}">${escapeHtml(s.id)}</a>` },
        { html: escapeHtml(s.final.phase) },
        { html: tasks },
        { html: escapeHtml(s.final.reason || '-'), className: 'why' },
        { html: since },
        { html: escapeHtml(s.final.lagAlarm ?? '-') },
      ],
    };
  });
  const caption = whyCaption(notConverged, model.services.length, offsetLabel(model.endedAt, model.startedAt));
  return renderWhyTable(caption, ['service', 'phase', 'running/desired', 'why', 'not converged since', 'lag alarm'], rows);
}

function legend(): string {
  const kinds = MARKER_KINDS.map((k) => {
    const svg = `<svg viewBox="0 0 14 14" width="14" height="14" aria-hidden="true">${markerShape(k, 7, 7, k === 'alarm' ? 'ALARM' : undefined)}</svg>`;
    return `<label class="toggle">${svg}<input type="checkbox" checked data-kind-toggle="${k}"> ${escapeHtml(KIND_LABEL[k])}</label>`;
  }).join('');
  const phases = [...PHASE_COLOR].map(([p, c]) => `<span class="swatch" style="background:${c}"></span>${p}`).join(' ');
  return [
    `<div class="legend" id="legend">`,
    `<p><span class="line desired"></span>desired count (ECS) <span class="area running"></span>running <span class="area pending"></span>pending</p>`,
    `<p>Markers (uncheck to hide): ${kinds}</p>`,
    `<p>Alarm marker: <span class="swatch to-alarm"></span>to ALARM <span class="swatch to-ok"></span>to OK. Phase band: ${phases}</p>`,
    `</div>`,
  ].join('');
}

/** The report's own styles, after the shared ones. */
const CSS = `${BASE_CSS}.chart{width:100%;height:auto;display:block}
.grid{stroke:#eee}.tick,.lane{font-size:10px;fill:#757575}
.running{fill:#81c784;stroke:none}.pending{fill:#fff59d;stroke:none}.desired{fill:none;stroke:#1a237e;stroke-width:2}
.rule{stroke:#9e9e9e;stroke-dasharray:2 3;stroke-width:1;opacity:.5}
.m-action{fill:#1e88e5}.m-drift{fill:#fb8c00}.m-failure{stroke:#c62828;stroke-width:3;fill:none}.m-step{fill:#616161}
.m-alarm.to-alarm{fill:#d50000}.m-alarm.to-ok{fill:#43a047}
.marker{cursor:pointer;outline:none}.marker:focus .rule,.marker.hi .rule{opacity:1;stroke:#000;stroke-dasharray:none}
.marker:focus>:not(title):not(.rule),.marker.hi>:not(title):not(.rule){stroke:#000;stroke-width:2}
.detail{min-height:1.4em;margin:.2em 0;font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap;word-break:break-word}
.events td.t{white-space:nowrap;font-family:ui-monospace,monospace}.events{font-size:12px}
.events tr.hi td{background:#fff8e1}
.k{padding:0 4px;border-radius:3px;color:#fff;white-space:nowrap}.k-action{background:#1e88e5}.k-drift{background:#fb8c00}.k-failure{background:#c62828}.k-alarm{background:#6a1b9a}.k-step{background:#616161}
.legend{border:1px solid #e0e0e0;padding:.3em .8em;margin:1em 0;font-size:12px}.legend p{margin:.3em 0}
.swatch{display:inline-block;width:12px;height:12px;margin:0 3px 0 8px;vertical-align:middle}.swatch.to-alarm{background:#d50000}.swatch.to-ok{background:#43a047}
.line.desired{display:inline-block;width:18px;border-top:2px solid #1a237e;vertical-align:middle;margin:0 3px}
.area{display:inline-block;width:14px;height:10px;vertical-align:middle;margin:0 3px 0 8px}.area.running{background:#81c784}.area.pending{background:#fff59d}
.toggle{margin-right:1em;white-space:nowrap;cursor:pointer}.toggle svg{vertical-align:middle}
${MARKER_KINDS.map((k) => `body.hide-${k} [data-kind="${k}"]`).join(',')}{display:none}
.expect-ok{color:#2e7d32}.expect-fail{color:#c62828}
`;

/**
 * Switches and highlights: a legend switch hides its kind's markers and rows; a marker or row
 * under the pointer or focused shows its sentence in its chart's detail line and highlights both.
 */
const SCRIPT = `
(function(){
  var body=document.body;
  document.querySelectorAll('input[data-kind-toggle]').forEach(function(cb){
    cb.addEventListener('change',function(){body.classList.toggle('hide-'+cb.getAttribute('data-kind-toggle'),!cb.checked);});
  });
  function pair(ref){return document.querySelectorAll('[data-ref="'+ref+'"]');}
  function show(el,on){
    var ref=el.getAttribute('data-ref');
    pair(ref).forEach(function(p){p.classList.toggle('hi',on);});
    var section=el.closest('section');var detail=section&&section.querySelector('.detail');
    if(!detail)return;
    var marker=section.querySelector('.marker[data-ref="'+ref+'"]');
    var text=marker&&marker.querySelector('title')?marker.querySelector('title').textContent:'';
    detail.textContent=on?text:detail.getAttribute('data-default');
  }
  document.querySelectorAll('[data-ref]').forEach(function(el){
    el.addEventListener('mouseenter',function(){show(el,true);});
    el.addEventListener('mouseleave',function(){show(el,false);});
    el.addEventListener('focus',function(){show(el,true);});
    el.addEventListener('blur',function(){show(el,false);});
  });
  body.setAttribute('data-ready','true');
})();
`;

/**
 * The whole page.
 * @returns a self-contained HTML document (UTF-8).
 */
export function renderReport(model: TimelineModel, header: ReportHeader): string {
  const expectations = header.expectations ?? [];
  const verdicts =
    expectations.length > 0
      ? `<h2>Expectations</h2><ul class="expectations">${expectations
          .map((e) => `<li class="${e.ok ? 'expect-ok' : 'expect-fail'}">${e.ok ? 'PASS' : 'FAIL'} ${escapeHtml(e.description)}: ${escapeHtml(e.detail)}</li>`)
          .join('')}</ul>`
      : '';
  const facts = [...header.facts, `simulated ${model.startedAt.toISOString()} to ${model.endedAt.toISOString()} (${offsetLabel(model.endedAt, model.startedAt)})`];
  if (header.running) facts.push('still running: this page is rewritten after each pass; reload to see more');
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    `<title>${escapeHtml(header.title)}</title>`,
    `<style>${CSS}</style></head><body>`,
    `<h1>${escapeHtml(header.title)}</h1>`,
    `<p class="facts">${facts.map(escapeHtml).join(' · ')}</p>`,
    whyTable(model),
    verdicts,
    legend(),
    model.services.map((s, i) => serviceSection(s, i, model)).join(''),
    reconcilerSection(model),
    `<script>${SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}

/** The service each scenario step disturbs, for its marker. */
function stepService(step: string): string | undefined {
  const s = STEPS.find((x) => x.id === step);
  return s ? serviceId(s.episode.key) : undefined;
}

/** What `ecsr local --report` says about the run it draws. */
export interface LocalReportInfo {
  readonly forever: boolean;
  readonly seed: number;
  /** Simulated seconds per real second. */
  readonly speed: number;
  /** The specs file or directory, as shown to the user. */
  readonly specs: string;
  readonly expectations?: readonly ExpectationResult[];
  /** True while a --forever run goes on; false for the last page. */
  readonly running?: boolean;
  readonly aborted?: boolean;
}

/** The page of a local run (scenario or --forever), so far or at its end. */
export function localRunReport(timeline: RunTimeline, info: LocalReportInfo): string {
  const passes = timeline.passes.length;
  const facts = [
    `${timeline.specs.length} specs from ${info.specs}`,
    `seed ${info.seed}`,
    `${info.speed}x`,
    `${passes} pass${passes === 1 ? '' : 'es'}, one per simulated minute`,
  ];
  if (info.aborted) facts.push('interrupted before the scenario ended: no verdict');
  return renderReport(buildTimeline(timeline, stepService), {
    title: info.forever ? 'ecsr local --forever' : 'ecsr local: the scripted scenario',
    facts,
    ...(info.expectations ? { expectations: info.expectations } : {}),
    ...(info.running ? { running: true } : {}),
  });
}

/**
 * Writes a page whole or not at all (a temporary file renamed over `path`), so that a browser
 * reloading a --forever run's page never reads half of one.
 * @throws Error from the file system (a missing directory, no permission), with its `code`.
 */
export function writeReportFile(path: string, html: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, html);
  renameSync(tmp, path);
}
