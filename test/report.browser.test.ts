/**
 * The HTML report in a real browser: headless Chromium (Debian's `chromium`, driven by
 * playwright-core; `.ci/run` installs it where it is missing) opens the report of a seeded session
 * with known figures, an overrun, a fallback and a planted secret (reportSeed.ts), from disk:
 *   - the values in the page equal the JSON report's (metrics, per spawn tokens and outcome);
 *   - no request leaves the file, and no console error or page error;
 *   - the secret is in neither the file nor the page's text;
 *   - with scripts off the page renders the same tables;
 *   - a screenshot is written for a person to look at (test/.artifacts/report.png).
 * Without Chromium the test fails and says how to get it (CHROMIUM_PATH names another binary).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, S1, type Project } from './helpers.ts';
import { copyIndexedFixture } from './inProcess.ts';
import { report, SECRET, SECRET_VALUE, seedReportSession } from './reportSeed.ts';

/** The Chromium binary: CHROMIUM_PATH, else the first of Debian's and others' names on PATH. */
function chromiumPath(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    try {
      return execFileSync('/bin/sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      // not this one
    }
  }
  return undefined;
}

const SCREENSHOT = path.join(REPO_ROOT, 'test', '.artifacts', 'report.png');

describe('the HTML report in headless Chromium', () => {
  let p: Project;
  let browser: Browser;
  let json: any;
  let file: string;
  beforeAll(async () => {
    const executablePath = chromiumPath();
    if (executablePath === undefined) throw new Error('Chromium not found: apt-get install -y chromium (as root; .ci/run does it), or set CHROMIUM_PATH');
    p = copyIndexedFixture('ca-report-browser-');
    seedReportSession(p);
    json = JSON.parse(report(p, ['--session', S1, '--format', 'json']).out);
    file = path.join(p.root, 'report.html');
    expect(report(p, ['--session', S1, '--format', 'html', '--out', file]).code).toBe(0);
    browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    p?.cleanup();
  });

  it('shows the JSON\'s values, asks for nothing beyond the file, logs no error, holds no secret; a screenshot is written', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    const url = pathToFileURL(file).href;
    await page.goto(url, { waitUntil: 'load' });
    // The metrics: each row's value as the JSON gives it.
    // The metrics: each row's cells as a person reads them, against the JSON's figures.
    const metrics = await page.$$eval('tr[data-metric]', (trs) =>
      trs.map((tr) => ({ key: tr.getAttribute('data-metric'), cells: [...tr.querySelectorAll('td')].map((td) => (td as unknown as { innerText: string }).innerText.trim()) })),
    );
    expect(metrics.map((m) => m.key)).toEqual(json.metrics.map((m: { key: string }) => m.key));
    for (const m of json.metrics) {
      const cells = metrics.find((x) => x.key === m.key)?.cells ?? [];
      expect(cells[0]).toBe(m.name);
      expect(cells[1]).toBe(m.value === null ? `not computable: ${m.missing}` : `${m.value}${m.unit === '%' ? ' %' : ''} (${m.figures})`);
      expect(cells[2]).toBe(m.target);
      expect(cells[3]).toBe(m.met === null ? 'n/a' : m.met ? 'met' : 'not met');
    }
    expect(json.metrics.map((m: { met: boolean | null }) => m.met)).toContain(false);
    // Every spawn: tokens used and budget, outcome.
    // Every spawn: its cells (iteration, verdict, outcome, packages shown, tokens used / budget).
    const spawns = await page.$$eval('tr[data-spawn]', (trs) =>
      trs.map((tr) => ({ id: Number(tr.getAttribute('data-spawn')), cells: [...tr.querySelectorAll('td')].map((td) => (td as unknown as { innerText: string }).innerText.trim()) })),
    );
    const session = json.sessions[0];
    expect(spawns.map((s) => s.id)).toEqual(session.spawns.map((s: { id: number }) => s.id));
    for (const sp of session.spawns) {
      const cells = spawns.find((s) => s.id === sp.id)?.cells ?? [];
      expect(cells.slice(2, 9)).toEqual([
        sp.group_id ?? 'session-wide',
        sp.agent,
        String(sp.iteration),
        sp.verdict,
        sp.outcome,
        String(sp.shown.filter((x: { kind: string }) => x.kind === 'package').length),
        sp.budget === null ? '—' : `${sp.used_tokens} / ${sp.budget}${sp.overrun > 0 ? ` (overrun ${sp.overrun})` : ''}`,
      ]);
    }
    expect(session.spawns.some((sp: { overrun: number }) => sp.overrun > 0)).toBe(true);
    expect(await page.locator('[data-fallback]').count()).toBe(session.fallbacks.length);
    expect(await page.locator('svg[data-chart="tokens"] rect').count()).toBe(session.spawns.filter((sp: { budget: number | null }) => sp.budget !== null).length);
    const text = await page.locator('body').innerText();
    expect(text).toContain('Packages never delivered');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SECRET_VALUE);
    const html = fs.readFileSync(file, 'utf8');
    expect(html).not.toContain(SECRET);
    expect(html).not.toContain(SECRET_VALUE);
    // Nothing but the file itself was asked for.
    expect(requests).toEqual([url]);
    expect(problems).toEqual([]);
    fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(fs.readFileSync(SCREENSHOT).subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    await context.close();
  }, 60_000);

  it('renders the same tables with scripts off', async () => {
    const on = await browser.newContext();
    const off = await browser.newContext({ javaScriptEnabled: false });
    const url = pathToFileURL(file).href;
    const texts: string[] = [];
    for (const context of [on, off]) {
      const page = await context.newPage();
      await page.goto(url, { waitUntil: 'load' });
      texts.push(await page.locator('table').allInnerTexts().then((t) => t.join('\n')));
      await context.close();
    }
    expect(texts[0]?.length).toBeGreaterThan(200);
    expect(texts[1]).toBe(texts[0]);
  }, 60_000);

  it('a page that asks for something is caught by the checks, and blocked by its policy', async () => {
    const bad = path.join(p.root, 'bad.html');
    fs.writeFileSync(bad, fs.readFileSync(file, 'utf8').replace('</body>', '<img src="https://example.invalid/x.png"></body>'));
    const context = await browser.newContext();
    const page = await context.newPage();
    const requests: string[] = [];
    const failed: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('requestfailed', (r) => failed.push(`${r.url()} ${r.failure()?.errorText ?? ''}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    await page.goto(pathToFileURL(bad).href, { waitUntil: 'load' });
    // The request check above would fail on it; the policy blocks it, and says so on the console.
    expect(requests).toContain('https://example.invalid/x.png');
    expect(failed).toEqual(['https://example.invalid/x.png csp']);
    expect(problems.join('\n')).toMatch(/Content Security Policy/i);
    await context.close();
  }, 60_000);
});
