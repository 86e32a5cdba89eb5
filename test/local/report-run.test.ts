/**
 * `ecsr local --report FILE` end to end: the built CLI runs the scripted scenario (virtual clock,
 * seed 1) and writes the page, which headless Chromium (Debian's, driven by playwright-core, which
 * downloads no browser) loads from the file; the test asserts what the page shows once its script
 * ran: the services, the reasons, the markers and where they sit on the time axis, the alarm
 * transition, the legend's switches and the hover detail. Then `--forever --report` rewrites the
 * page after each pass and writes the last one on Ctrl+C.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { baseEnv, collect, ecsr, REPO } from '../cli/run-cli';
import { needs, toolPath } from '../support/tools';

/** Simulated seconds of the scenario's time axis (passes at minutes 0..13). */
const SCENARIO_SECONDS = 13 * 60;
// The page's chart geometry (local/report.ts): the plot spans x = 44 .. 960 - 16 of a 960-wide viewBox.
const VIEW_W = 960;
const PLOT_LEFT = 44;
const PLOT_W = VIEW_W - PLOT_LEFT - 16;

/** The little of the browser's `window` used here (the project's types have no DOM library). */
interface BrowserWindow {
  getComputedStyle(element: unknown): { fill: string };
}

describe('ecsr local --report in headless Chromium', { ...needs('chromium'), timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'ecsr-report-'));
  const file = join(dir, 'run.html');
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    // The scenario, as a user runs it, with the page written at its end.
    const r = await ecsr(['local', '--speed', '1000000', '--plain', '--report', file], { timeoutMs: 180_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Report written to ${file}`);
    browser = await chromium.launch({ executablePath: toolPath('chromium') ?? 'chromium', args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    page.setDefaultTimeout(100_000); // a loaded machine, never a measure of speed
    page.on('request', (req) => requests.push(req.url()));
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') errors.push(msg.text());
    });
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-ready="true"]');
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
  });

  const section = (service: string) => page.locator(`section[data-service="${service}"]`);
  /** Where a marker's shape is drawn, as a fraction of its chart's width (time axis: 0 at the start). */
  const markerAt = async (marker: ReturnType<Page['locator']>) => {
    const box = await marker.locator('line.rule').boundingBox();
    const svg = await marker.locator('xpath=ancestor::*[local-name()="svg"][1]').boundingBox();
    if (!box || !svg) throw new Error('marker or chart not laid out');
    return (((box.x + box.width / 2 - svg.x) / svg.width) * VIEW_W - PLOT_LEFT) / PLOT_W;
  };

  it('is self-contained and its script runs without errors', () => {
    expect(requests).toEqual([pathToFileURL(file).href]);
    expect(errors).toEqual([]);
  });

  it('shows each service as a titled chart, and why the one not converged is not', async () => {
    // Every service has its chart, named for screen readers.
    for (const service of ['shop/ledger', 'shop/thumbnails', 'shop/web', 'shop/worker']) {
      await expect(page.getByRole('group', { name: `${service}: desired and running tasks over simulated time` }).count()).resolves.toBe(1);
      await expect(section(service).locator('h2').textContent()).resolves.toContain(service);
    }
    // The summary table, worst first.
    await expect(page.locator('#why caption').textContent()).resolves.toBe('Why not converged: 1 of 4 services not converged at +13m00s');
    const first = page.locator('#why tbody tr').first();
    const cells = await first.locator('td').allTextContents();
    expect(cells.slice(0, 3)).toEqual(['shop/ledger', 'Degraded', '0/2']);
    expect(cells[3]).toMatch(/^RolloutFailed: TaskFailedToStart: CannotPullContainerError: pull image manifest has been retried 5 time\(s\)/);
    expect(cells[4]).toBe('+0m00s');
    expect(cells[5]).toBe('ALARM');
    const others = await page.locator('#why tbody tr:not(:first-child) td:nth-child(2)').allTextContents();
    expect(others.sort()).toEqual(['Converged', 'Converged', 'Deleted']);
    // The reason is also under the chart, and the phase band ends Degraded.
    await expect(section('shop/ledger').locator('.detail').textContent()).resolves.toContain('CannotPullContainerError');
    await expect(section('shop/ledger').locator('rect.phase').last().getAttribute('data-phase')).resolves.toBe('Degraded');
  });

  it('marks every event on the timeline, visibly and at its time, and lists it under the chart', async () => {
    for (const service of ['shop/ledger', 'shop/thumbnails', 'shop/web', 'shop/worker']) {
      const markers = section(service).locator('.marker');
      const n = await markers.count();
      expect(n).toBeGreaterThanOrEqual(3);
      await expect(section(service).locator('table.events tbody tr').count()).resolves.toBe(n);
      for (let i = 0; i < n; i++) {
        const box = await markers.nth(i).boundingBox();
        expect(box?.width).toBeGreaterThan(0);
      }
    }
    const kinds = async (service: string) => section(service).locator('.marker').evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')));
    // worker: scaled to 6 by hand at 4m30s, the drift corrected by the pass at 5m00s.
    const worker = await kinds('shop/worker');
    expect(worker.filter((k) => k === 'drift')).toHaveLength(1);
    expect(worker.filter((k) => k === 'step')).toHaveLength(1);
    const drift = section('shop/worker').locator('.marker[data-kind="drift"]');
    await expect(drift.locator('title').textContent()).resolves.toBe('+5m00s pass 6: UpdateService(drift) shop/worker: desiredCount 6 -> 2');
    expect(await markerAt(drift)).toBeCloseTo(300 / SCENARIO_SECONDS, 2);
    expect(await markerAt(section('shop/worker').locator('.marker[data-kind="step"]'))).toBeCloseTo(270 / SCENARIO_SECONDS, 2);
    // The worker's chart goes up to the 6 tasks it was scaled to.
    await expect(section('shop/worker').locator('text.tick').allTextContents()).resolves.toContain('6');
    // web: two changes by hand (tasks stopped, image changed) and the rollout.
    const web = await kinds('shop/web');
    expect(web.filter((k) => k === 'step')).toHaveLength(2);
    await expect(section('shop/web').locator('.marker[data-kind="action"] title').allTextContents()).resolves.toContainEqual(expect.stringMatching(/^\+7m00s pass 8: UpdateService\(rollout\) shop\/web: /));
    // thumbnails: pruned.
    await expect(section('shop/thumbnails').locator('.marker[data-kind="action"] title').allTextContents()).resolves.toContainEqual(expect.stringMatching(/DeleteService shop\/thumbnails/));
    // ledger: its failure, with the reason.
    const failure = section('shop/ledger').locator('.marker[data-kind="failure"]').first();
    await expect(failure.locator('title').textContent()).resolves.toMatch(/-> Degraded \(RolloutFailed: TaskFailedToStart: CannotPullContainerError/);
    await expect(failure.getAttribute('aria-label')).resolves.toMatch(/^failure: /);
  });

  it('shows the lag alarm going to ALARM for shop/ledger, with the stop reason, and the alarms as a whole', async () => {
    const alarm = section('shop/ledger').locator('.marker[data-kind="alarm"]');
    await expect(alarm.count()).resolves.toBe(1);
    await expect(alarm.locator('title').textContent()).resolves.toMatch(
      /^\+5m00s ServiceLagBeyondGrace \[shop\/ledger\]: INSUFFICIENT_DATA -> ALARM \(latest datapoint 2\): TaskFailedToStart: CannotPullContainerError/,
    );
    await expect(alarm.locator('rect').evaluate((r) => (globalThis as unknown as BrowserWindow).getComputedStyle(r).fill)).resolves.toBe('rgb(213, 0, 0)');
    expect(await markerAt(alarm)).toBeCloseTo(300 / SCENARIO_SECONDS, 2);
    const whole = await page.locator('#reconciler .marker[data-kind="alarm"] title').allTextContents();
    expect(whole).toEqual(['+5m00s ServiceLagBeyondGrace (any service): INSUFFICIENT_DATA -> ALARM', '+7m00s ServicesLaggingBeyondGrace: OK -> ALARM (latest datapoint 1)']);
  });

  it('a marker with the keyboard focus shows its sentence under the chart', async () => {
    const drift = section('shop/worker').locator('.marker[data-kind="drift"]');
    await drift.focus();
    await expect(section('shop/worker').locator('.detail').textContent()).resolves.toBe('+5m00s pass 6: UpdateService(drift) shop/worker: desiredCount 6 -> 2');
    await drift.blur();
    await expect(section('shop/worker').locator('.detail').textContent()).resolves.toBe('Converged, 2/2 running');
  });

  it('a marker under the pointer shows its sentence under the chart and highlights its row', async () => {
    const alarm = section('shop/ledger').locator('.marker[data-kind="alarm"]');
    const ref = await alarm.getAttribute('data-ref');
    await alarm.locator('rect').hover();
    await expect(section('shop/ledger').locator('.detail').textContent()).resolves.toMatch(/^\+5m00s ServiceLagBeyondGrace \[shop\/ledger\]: INSUFFICIENT_DATA -> ALARM/);
    await expect(page.locator(`tr[data-ref="${ref}"]`).getAttribute('class')).resolves.toBe('hi');
    await page.mouse.move(0, 0);
    await expect(section('shop/ledger').locator('.detail').textContent()).resolves.toMatch(/^Degraded, 0\/2 running: RolloutFailed/);
  });

  it("the legend's switches hide and show a kind of marker and its rows", async () => {
    const drift = section('shop/worker').locator('.marker[data-kind="drift"]');
    const row = section('shop/worker').locator('tr[data-kind="drift"]');
    await expect(drift.isVisible()).resolves.toBe(true);
    await page.locator('input[data-kind-toggle="drift"]').uncheck();
    await expect(drift.isVisible()).resolves.toBe(false);
    await expect(row.isVisible()).resolves.toBe(false);
    await expect(section('shop/worker').locator('.marker[data-kind="step"]').isVisible()).resolves.toBe(true);
    await page.locator('input[data-kind-toggle="drift"]').check();
    await expect(drift.isVisible()).resolves.toBe(true);
  });
});

describe('ecsr local --forever --report', () => {
  it('rewrites the page after each pass while it runs, and writes the last one on Ctrl+C', { timeout: 120_000 }, async () => {
    // Prepare
    const file = join(mkdtempSync(join(tmpdir(), 'ecsr-report-')), 'forever.html');
    const child = spawn(process.execPath, ['bin/ecsr.js', 'local', '--forever', '--speed', '600', '--plain', '--report', file], { cwd: REPO, env: baseEnv() });
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const done = collect(child, { timeoutMs: 110_000 });

    // Act: wait for a page that has seen three passes, then Ctrl+C.
    const passes = (html: string) => Number(/(\d+) pass(?:es)?, one per simulated minute/.exec(html)?.[1] ?? 0);
    let html = '';
    for (let i = 0; i < 900 && !(html.includes('still running') && passes(html) >= 3); i++) {
      await new Promise((r) => setTimeout(r, 100));
      html = existsSync(file) ? readFileSync(file, 'utf8') : '';
    }
    child.kill('SIGINT');
    const r = await done;

    // Assess
    expect(passes(html)).toBeGreaterThanOrEqual(3);
    expect(html).toContain('<title>ecsr local --forever</title>');
    expect(html).toMatch(/<section class="service" id="service-\d+" data-service="shop\/web">/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Report written to ${file}`);
    const last = readFileSync(file, 'utf8');
    expect(last).not.toContain('still running');
    expect(passes(last)).toBeGreaterThanOrEqual(passes(html));
  });

  it('a page that cannot be written fails at once, in one sentence', async () => {
    const r = await ecsr(['local', '--speed', '1000000', '--report', join(tmpdir(), 'no-such-dir-ecsr', 'run.html')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`ecsr local: The report could not be written to ${join(tmpdir(), 'no-such-dir-ecsr', 'run.html')}: its directory does not exist.\n`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).not.toContain('Summary:');
  });
});
