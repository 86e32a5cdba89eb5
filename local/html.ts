/**
 * What the two HTML pages of the project share: the run report `ecsr local --report` writes
 * (local/report.ts) and the live fleet page `ecsr ui` serves (bin/commands/support/ui-page.ts).
 * Escaping, the colour of each phase, the base styles, and the "why not converged" table (one
 * row per service, the ones not converged marked `open`). Both pages are self-contained: nothing
 * here refers to anything on the network.
 */

/** Text for HTML content and attribute values (`&`, `<`, `>`, `"` and `'` as numeric references). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The colour of each phase (docs/status.md), as the charts' bands and the tags draw it. */
export const PHASE_COLOR: ReadonlyMap<string, string> = new Map([
  ['Converged', '#2e7d32'],
  ['Progressing', '#1565c0'],
  ['Pending', '#6a8caf'],
  ['Degraded', '#c62828'],
  ['Invalid', '#ad1457'],
  ['Blocked', '#e65100'],
  ['Deleting', '#757575'],
  ['Deleted', '#bdbdbd'],
]);

/** The colour of `phase`, grey for a phase the map does not know. */
export function phaseColor(phase: string): string {
  return PHASE_COLOR.get(phase) ?? '#9e9e9e';
}

/** A phase as a tag with its colour as border (`<span class="phase-tag">`). */
export function phaseTag(phase: string): string {
  return `<span class="phase-tag" style="border-color:${phaseColor(phase)}">${escapeHtml(phase)}</span>`;
}

/** The styles of the page itself, the summary table and the phase tags, which both pages use. */
export const BASE_CSS = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1000px;color:#212121;padding:0 1em}
h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.1em;margin:1.2em 0 .3em}
.facts{color:#555;margin:0 0 .8em}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:2px 6px;border-bottom:1px solid #e0e0e0;vertical-align:top}
caption{text-align:left;font-weight:600;padding:.3em 0}
.why-table tr.open td{background:#fff3f3}.why{white-space:pre-wrap;word-break:break-word}
.phase-tag{border:2px solid;padding:0 6px;border-radius:3px;font-size:.8em;vertical-align:middle}
`;

/** One cell of a {@link whyTable} row: its HTML (already escaped) and its class, if any. */
export interface WhyCell {
  readonly html: string;
  readonly className?: string;
}

/** One row of a {@link whyTable}: the service it is about, whether it is not converged, its cells. */
export interface WhyRow {
  /** `cluster/service` (the row's `data-service`). */
  readonly service: string;
  /** True for a service not converged: the row is marked `open` (and tinted). */
  readonly open: boolean;
  readonly cells: readonly WhyCell[];
}

/** The caption's words: `Why not converged: 1 of 4 services not converged at +13m00s`. */
export function whyCaption(notConverged: number, total: number, at: string): string {
  return `Why not converged: ${notConverged} of ${total} service${total === 1 ? '' : 's'} not converged at ${at}`;
}

/**
 * The "why not converged" table: `<table id="why" class="why-table">` with the caption, the
 * header cells `headers` (plain text) and the rows in the order given (callers put the ones not
 * converged first).
 */
export function whyTable(caption: string, headers: readonly string[], rows: readonly WhyRow[]): string {
  const body = rows
    .map((r) => {
      const cells = r.cells.map((c) => `<td${c.className ? ` class="${c.className}"` : ''}>${c.html}</td>`).join('');
      return `<tr data-service="${escapeHtml(r.service)}"${r.open ? ' class="open"' : ''}>${cells}</tr>`;
    })
    .join('');
  return [
    `<table id="why" class="why-table"><caption>${escapeHtml(caption)}</caption>`,
    `<thead><tr>${headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead>`,
    `<tbody>${body}</tbody></table>`,
  ].join('');
}
