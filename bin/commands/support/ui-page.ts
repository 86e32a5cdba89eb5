/**
 * The live fleet page of `ecsr ui`: one self-contained HTML document (inline styles and script,
 * nothing fetched from the network) whose fleet part ({@link renderFleet}) the server renders
 * again at each read of the table and pushes to the page as a server-sent event (`GET /events`,
 * event `fleet`); the page's script swaps it in without a reload, keeping which services the
 * person opened. Escaping, the phase colours, the base styles and the "why not converged" table
 * are the run report's (local/html.ts).
 *
 * Source: the HTML Living Standard, "Server-sent events" (EventSource, `event:` and `data:`
 * fields, reconnection).
 */
import { BASE_CSS, escapeHtml, phaseTag, whyCaption, whyTable, type WhyRow } from '../../../local/html';
import type { FleetDeployment, FleetService, FleetSnapshot } from './ui-fleet';

/** `2026-12-04 05:01:02Z`: an ISO time as the CLI prints it; `-` for none. */
function time(iso: string | undefined): string {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '-';
}

/** The anchor of a service's section (ids are stable across reads, unlike positions). */
function anchor(s: FleetService): string {
  return `svc-${s.id}`;
}

function tasksText(s: FleetService): string {
  if (!s.tasks) return '-';
  return `${s.tasks.running}/${s.tasks.desired}${s.tasks.pending > 0 ? ` +${s.tasks.pending}` : ''}`;
}

function deploymentText(d: FleetDeployment | undefined): string {
  if (!d) return '-';
  return `${d.strategy} ${d.state}${d.detail ? `: ${d.detail}` : ''}`;
}

/** The summary table: one row per service, the ones not converged first (the report's table). */
function fleetTable(snapshot: FleetSnapshot): string {
  const services = snapshot.services;
  const rows: WhyRow[] = services.map((s) => ({
    service: s.id,
    open: s.notConverged,
    cells: [
      { html: `<a href="#${escapeHtml(anchor(s))}">${escapeHtml(s.id)}</a>` },
      { html: escapeHtml(s.phase), className: 'phase' },
      { html: escapeHtml(tasksText(s)) },
      { html: escapeHtml(s.synced) },
      { html: escapeHtml(s.reason || '-'), className: 'why' },
      { html: escapeHtml(driftText(s)), className: 'drift' },
      { html: escapeHtml(deploymentText(s.deployment)), className: 'deployment' },
      { html: escapeHtml(time(s.notConvergedSince)) },
    ],
  }));
  const caption = whyCaption(services.filter((s) => s.notConverged).length, services.length, time(snapshot.readAt));
  return whyTable(caption, ['service', 'phase', 'running/desired', 'synced', 'why', 'drift', 'deployment', 'not converged since'], rows);
}

/** The drift cell: what observe-only left as it is, else what the last correction set back, else `-`. */
function driftText(s: FleetService): string {
  if (s.observedDrift && s.observedDrift.length > 0) return `not corrected (observe-only): ${s.observedDrift.join(', ')}`;
  return s.drift.length > 0 ? s.drift.join(', ') : '-';
}

/** A small table of `head` and `rows` (plain text, escaped here). */
function smallTable(className: string, head: readonly string[], rows: readonly (readonly string[])[], rowClass?: (i: number) => string): string {
  const body = rows.map((r, i) => `<tr${rowClass?.(i) ? ` class="${rowClass(i)}"` : ''}>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('');
  return `<table class="${className}"><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>`;
}

/** One service in full: conditions with their messages, drift, deployment, last action, revisions. */
function serviceSection(s: FleetService): string {
  const facts = [
    `tasks ${tasksText(s)}`,
    `synced ${s.synced}`,
    ...(s.observedAt ? [`observed ${time(s.observedAt)}`] : ['no pass has seen this spec yet']),
  ];
  const corrected = s.drift.length > 0 ? `<p class="drift">Drift corrected${s.driftCorrectedAt ? ` ${escapeHtml(time(s.driftCorrectedAt))}` : ''}: ${escapeHtml(s.drift.join(', '))}</p>` : '';
  const observed = s.observeOnly
    ? `<p class="observe-only">Observe-only: nothing is changed${s.observedDrift && s.observedDrift.length > 0 ? `; not corrected: ${escapeHtml(s.observedDrift.join(', '))}` : '; the service matches its spec'}</p>`
    : '';
  const drift = observed + corrected;
  const deployment = s.deployment ? `<p class="deployment">Deployment in progress: ${escapeHtml(deploymentText(s.deployment))}${s.deployment.since ? ` (since ${escapeHtml(time(s.deployment.since))})` : ''}</p>` : '';
  const action = s.lastAction ? `<p class="last-action">Last action: ${escapeHtml(s.lastAction)} at ${escapeHtml(time(s.lastActionAt))}</p>` : '';
  const conditions =
    s.conditions.length > 0
      ? smallTable('conditions', ['condition', 'status', 'reason', 'message', 'since'], s.conditions.map((c) => [c.type, c.status, c.reason, c.message, time(c.since)]))
      : '';
  const history =
    s.history.length > 0
      ? `<h3>Spec history (newest ${s.history.length} of ${s.revisionsKept} kept; ecsr history ${escapeHtml(s.id)} lists every one)</h3>` +
        smallTable(
          'history',
          ['revision', 'written', 'by', 'via', 'outcome', 'change'],
          s.history.map((r) => [`${r.current ? '*' : ''}${r.revision}`, time(r.writtenAt), r.writtenBy, r.via, r.outcome, r.change]),
          (i) => (s.history[i].current ? 'current' : ''),
        )
      : '<p class="none">No recorded revision.</p>';
  return [
    `<details class="svc" id="${escapeHtml(anchor(s))}" data-service="${escapeHtml(s.id)}"${s.notConverged ? ' open' : ''}>`,
    `<summary><span class="name">${escapeHtml(s.id)}</span> ${phaseTag(s.phase)} <span class="facts">${escapeHtml(facts.join(' · '))}</span></summary>`,
    s.reason ? `<p class="reason">${escapeHtml(s.reason)}</p>` : '',
    deployment,
    drift,
    action,
    conditions,
    history,
    `</details>`,
  ].join('');
}

/**
 * The part of the page that follows the table: the local run's last pass, the prune holds, a
 * failed read, the summary table and each service's section. Everything shown is escaped.
 */
export function renderFleet(snapshot: FleetSnapshot): string {
  const notes = [
    ...(snapshot.heartbeat ? [`<p class="note heartbeat">${escapeHtml(snapshot.heartbeat)}</p>`] : []),
    ...snapshot.pruneHolds.map((h) => `<p class="note hold">${escapeHtml(h)}</p>`),
    ...(snapshot.error ? [`<p class="note error" role="alert">${escapeHtml(snapshot.error)}</p>`] : []),
  ];
  if (snapshot.services.length === 0) return `${notes.join('')}<p class="empty">No specs in table ${escapeHtml(snapshot.table)}.</p>`;
  return `${notes.join('')}${fleetTable(snapshot)}<h2>Services</h2>${snapshot.services.map(serviceSection).join('')}`;
}

/** The page's own styles, after the shared ones. */
const CSS = `${BASE_CSS}
h3{font-size:.95em;margin:.6em 0 .2em}
.live{font-size:12px;padding:1px 6px;border-radius:3px;background:#e0e0e0}.live.on{background:#c8e6c9}.live.off{background:#ffcdd2}
.note{padding:.3em .6em;margin:.3em 0;border-left:4px solid #9e9e9e;background:#fafafa}.note.hold{border-color:#e65100}.note.error{border-color:#c62828;background:#fff3f3}
.svc{border:1px solid #e0e0e0;border-radius:4px;margin:.4em 0;padding:.2em .6em}.svc summary{cursor:pointer}.svc .name{font-weight:600}
.svc .facts{font-size:12px}.reason{white-space:pre-wrap;word-break:break-word;color:#b71c1c}
.conditions,.history{font-size:12px;margin:.3em 0}.history tr.current td{background:#f1f8e9}
.none,.empty{color:#757575}
`;

/**
 * Swaps in each `fleet` event's HTML (keeping the sections a person opened or closed), and shows
 * whether the page is following the table; EventSource reconnects by itself after an error.
 */
const SCRIPT = `
(function(){
  var fleet=document.getElementById('fleet');var live=document.getElementById('live');var readAt=document.getElementById('read-at');
  var chosen={};
  fleet.addEventListener('click',function(e){var m=e.target.closest&&e.target.closest('details.svc>summary');if(m){var d=m.parentNode;chosen[d.getAttribute('data-service')]=!d.open;}});
  function state(text,cls){live.textContent=text;live.className='live '+cls;}
  var source=new EventSource('events');
  source.addEventListener('open',function(){state('live','on');});
  source.addEventListener('error',function(){state('reconnecting','off');});
  source.addEventListener('fleet',function(e){
    var data=JSON.parse(e.data);
    readAt.textContent=data.readAt;
    if(typeof data.html==='string'){
      fleet.innerHTML=data.html;
      fleet.querySelectorAll('details.svc').forEach(function(d){var k=d.getAttribute('data-service');if(k in chosen)d.open=chosen[k];});
    }
    document.body.setAttribute('data-version',String(data.version));
    state('live','on');
  });
  document.body.setAttribute('data-ready','true');
})();
`;

/** What the page's header says besides the fleet. */
export interface PageInfo {
  /** Seconds between reads of the table. */
  readonly intervalSeconds: number;
  /** The version of the first fleet (the events count up from it). */
  readonly version: number;
}

/**
 * The whole page, with the fleet as `snapshot` has it (so it shows without the script).
 * @returns a self-contained HTML document (UTF-8).
 */
export function renderPage(snapshot: FleetSnapshot, info: PageInfo): string {
  const title = `ecsr ui: ${snapshot.table}${snapshot.target !== 'default' ? ` (target ${snapshot.target})` : ''}`;
  const facts = [`table ${snapshot.table}`, `target ${snapshot.target}`, `read every ${info.intervalSeconds}s`, 'read-only'];
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width,initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${CSS}</style></head><body data-version="${info.version}">`,
    `<h1>${escapeHtml(title)} <span id="live" class="live">connecting</span></h1>`,
    `<p class="facts">${facts.map(escapeHtml).join(' · ')} · read at <span id="read-at">${escapeHtml(snapshot.readAt)}</span></p>`,
    `<div id="fleet">${renderFleet(snapshot)}</div>`,
    `<script>${SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}
