// End to end in real VS Code, in a window narrow enough that the thread, beside an
// editor, is about 400 px wide: the buttons while a question runs, a suggested edit's
// diff wrapping instead of scrolling sideways, a citation without a note in the Problems
// panel, and a new answer opening at its question. Layout is asserted on measured boxes,
// with a screenshot of each.

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import { answerFrame, closeAnswerTab, focusProblems, openFile, runCommand, serverRunning, showThread, waitUntil } from './harness';
import { DEEP_PATH, DEEP_QUESTION, LONG_ANSWER_END, LONG_QUESTION, MULTILINE_QUESTION, NARROW_SCRIPT, STOPPED_QUESTION } from './narrow_scenario';
import { closeSession, openSession, requests, screenshot, stepsOf, type Session } from './session';

let session: Session | undefined;
let page: Page;
const step = stepsOf(() => session);

/** How each of the thread's Ask and Stop buttons looks now. */
interface ButtonLook {
  primary: boolean;
  disabled: boolean;
  hidden: boolean;
}

async function buttons(): Promise<{ ask: ButtonLook; stop: ButtonLook }> {
  return answerFrame(page)
    .locator('body')
    .evaluate(() => {
      // The theme's primary button colour, as the page resolves it.
      const probe = document.createElement('span');
      probe.style.backgroundColor = 'var(--vscode-button-background)';
      document.body.appendChild(probe);
      const primary = getComputedStyle(probe).backgroundColor;
      probe.remove();
      const look = (id: string) => {
        const button = document.getElementById(id) as HTMLButtonElement;
        return { primary: getComputedStyle(button).backgroundColor === primary, disabled: button.disabled, hidden: button.offsetParent === null };
      };
      return { ask: look('send'), stop: look('stop') };
    });
}

/** Waits until the buttons look as `want` says; the message names what was seen. */
async function buttonsBecome(what: string, want: { ask: ButtonLook; stop: Partial<ButtonLook> }): Promise<void> {
  let seen: unknown;
  try {
    await waitUntil(what, async () => {
      const now = await buttons();
      seen = now;
      const stopMatches = Object.entries(want.stop).every(([k, v]) => now.stop[k as keyof ButtonLook] === v);
      return JSON.stringify(now.ask) === JSON.stringify(want.ask) && stopMatches ? true : undefined;
    }, 15_000);
  } catch {
    assert.fail(`${what}: the buttons look like ${JSON.stringify(seen)}`);
  }
}

/** Where the last exchange's question is in the thread's viewport (above the input box). */
async function lastQuestionBox() {
  return answerFrame(page)
    .locator('body')
    .evaluate(() => {
      const headings = document.querySelectorAll('.exchange h3.question');
      const heading = headings[headings.length - 1];
      const box = heading.getBoundingClientRect();
      return {
        text: heading.textContent,
        top: box.top,
        bottom: box.bottom,
        composerTop: document.getElementById('composer')!.getBoundingClientRect().top,
        viewport: window.innerHeight,
        scrollHeight: document.documentElement.scrollHeight,
        scrollY: window.scrollY,
      };
    });
}

function inView(box: { top: number; bottom: number; composerTop: number }): boolean {
  return box.top >= 0 && box.bottom <= box.composerTop;
}

/** Types a question into the thread's box and sends it with Enter. */
async function askInThread(question: string): Promise<void> {
  // Enter while a question runs would not send it.
  await answerFrame(page).locator('#send:enabled').waitFor();
  const box = answerFrame(page).locator('#question');
  await box.fill(question);
  await box.press('Enter');
}

describe('the thread in a narrow panel', { timeout: 600_000 }, () => {
  before(async () => {
    session = await openSession({ name: 'narrow', script: NARROW_SCRIPT, viewport: { width: 1150, height: 900 } });
    page = session.page;
  });

  after(async () => {
    await closeSession(session);
  });

  step('opens the thread beside an editor, about 400 px wide', async () => {
    await serverRunning(page).waitFor({ timeout: 60_000 });
    await openFile(page, 'src/config.rs');
    await runCommand(page, 'copilot-ls: Show Last Answer');
    await answerFrame(page).locator('#answer', { hasText: 'No answer yet' }).waitFor();
    const width = await answerFrame(page).locator('body').evaluate((body) => body.clientWidth);
    assert.ok(width >= 300 && width <= 480, `the thread is ${width} px wide`);
  });

  step('makes Stop the primary button while a question runs, and Ask again once it ends', async () => {
    await buttonsBecome('Ask primary before a question', { ask: { primary: true, disabled: false, hidden: false }, stop: { hidden: true } });
    await askInThread(STOPPED_QUESTION);
    const running = answerFrame(page).locator('.exchange[data-state="running"]', { hasText: STOPPED_QUESTION });
    await running.waitFor();
    await waitUntil('the hanging provider call', () => requests(session!).length === 1 || undefined);
    const failure = await buttonsBecome('Stop primary while the question runs', {
      ask: { primary: false, disabled: true, hidden: false },
      stop: { primary: true, hidden: false },
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    if (!failure) {
      await screenshot(session!, 'stop-is-primary-while-asking');
    }
    // Stopped either way, so that the next steps get the model calls meant for them.
    await answerFrame(page).locator('#stop').click();
    // Away from the buttons, so that no hover colour is measured.
    await page.mouse.move(0, 0);
    await answerFrame(page).locator('.exchange[data-state="cancelled"]', { hasText: STOPPED_QUESTION }).waitFor();
    if (failure) {
      throw failure;
    }
    await buttonsBecome('Ask primary again after the question ended', { ask: { primary: true, disabled: false, hidden: false }, stop: { hidden: true } });
  });

  step('wraps a suggested edit\'s diff: no sideways scrolling, each line\'s +/- at its start', async () => {
    await askInThread(MULTILINE_QUESTION);
    const exchange = answerFrame(page).locator('.exchange[data-state="answered"]', { hasText: 'Where is the burst read?' });
    const diff = exchange.locator('pre.diff');
    await diff.locator('.added', { hasText: 'malformed variable' }).waitFor({ timeout: 60_000 });
    const measured = await diff.evaluate((pre) => {
      const left = pre.getBoundingClientRect().left;
      const lines = Array.from(pre.querySelectorAll<HTMLElement>(':scope > span')).map((span) => {
        const range = document.createRange();
        range.selectNodeContents(span);
        // One box per row the line takes; the first starts with the line's marker.
        const rows = Array.from(range.getClientRects()).map((r) => Math.round(r.left - left));
        return { text: span.textContent ?? '', rows };
      });
      return { clientWidth: pre.clientWidth, scrollWidth: pre.scrollWidth, lines };
    });
    await screenshot(session!, 'diff-wraps-in-a-narrow-panel');
    const report = JSON.stringify(measured);
    assert.ok(measured.clientWidth <= 480, `a narrow panel: ${report}`);
    assert.ok(measured.scrollWidth <= measured.clientWidth, `no sideways scrolling: ${report}`);
    const long = measured.lines.filter((l) => l.text.includes('malformed variable'));
    assert.equal(long.length, 1, report);
    assert.ok(long[0].rows.length >= 2, `the long line wraps: ${report}`);
    for (const line of measured.lines) {
      assert.match(line.text, /^[-+ ]/, report);
      // Wrapped rows start right of the marker, which stays alone at the line's start.
      for (const row of line.rows.slice(1)) {
        assert.ok(row > line.rows[0], `a wrapped row of ${JSON.stringify(line.text)} starts under its marker: ${report}`);
      }
    }
  });

  step('lists a citation without a note in the Problems panel under a short message, not the whole question', async () => {
    await focusProblems(page);
    const row = page.locator('.markers-panel .monaco-list-row', { hasText: 'citation' }).first();
    await row.waitFor();
    const text = await row.innerText();
    assert.match(text, /copilot-ls/, text);
    assert.match(text, /Cited in the answer to: Where is the burst read\?/, text);
    // Issue #55 item 5: the row names what is at the cited lines, and the citation's number.
    assert.match(text, /\(1\) fn read<T: std::str::FromStr>\(name: &str, default: T\) -> T — Cited/, text);
    assert.doesNotMatch(text, /malformed value/, `the question's second line is not part of it: ${text}`);
    await screenshot(session!, 'citation-without-a-note-in-problems');
  });

  step('keeps a new answer\'s question in view while the answer streams past it, and on reopening', async () => {
    await askInThread(LONG_QUESTION);
    const exchange = answerFrame(page).locator('.exchange', { hasText: LONG_QUESTION });
    await exchange.locator('.streaming').first().waitFor({ timeout: 60_000 });
    await answerFrame(page).locator('.exchange[data-state="answered"]', { hasText: LONG_QUESTION }).getByText(LONG_ANSWER_END).waitFor({ timeout: 60_000 });
    const box = await lastQuestionBox();
    await screenshot(session!, 'question-in-view-after-a-long-answer');
    assert.equal(box.text, LONG_QUESTION);
    assert.ok(box.scrollHeight > box.viewport + 200, `the answer is taller than the panel: ${JSON.stringify(box)}`);
    assert.ok(inView(box), `the question is in view: ${JSON.stringify(box)}`);
    await buttonsBecome('Ask primary after the answer', { ask: { primary: true, disabled: false, hidden: false }, stop: { hidden: true } });
    // The thread opened again shows the last question, not the top of the thread.
    await closeAnswerTab(page);
    await showThread(page);
    let seen: unknown;
    await waitUntil('the last question in view of the reopened thread', async () => {
      const now = await lastQuestionBox();
      seen = now;
      return now.text === LONG_QUESTION && now.scrollY > 0 && inView(now) ? true : undefined;
    }, 15_000).catch(() => assert.fail(`the reopened thread: ${JSON.stringify(seen)}`));
  });

  // Issue #55 item 4: in a 267 px view the page was 308 px wide, a citation link of a deep
  // path did not wrap, and bringing it into view panned the thread sideways.
  step('wraps a long citation link in a 260 px thread: nothing wider than the view', async () => {
    const file = path.join(session!.workspace, DEEP_PATH);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, 'pub struct Backoff {\n    pub base_ms: u64,\n}\n');
    // Narrow the window until the thread (beside the editor) is about 260 px wide.
    let width = 0;
    for (let viewport = 1000; viewport >= 600; viewport -= 20) {
      await page.setViewportSize({ width: viewport, height: 900 });
      width = await answerFrame(page).locator('body').evaluate((body) => body.clientWidth);
      if (width <= 265) break;
    }
    assert.ok(width >= 230 && width <= 265, `the thread is ${width} px wide`);
    await askInThread(DEEP_QUESTION);
    const exchange = answerFrame(page).locator('.exchange[data-state="answered"]', { hasText: DEEP_QUESTION });
    await exchange.locator('a', { hasText: 'exponential_backoff' }).first().waitFor({ timeout: 60_000 });
    const measured = await answerFrame(page)
      .locator('body')
      .evaluate(() => ({
        viewport: document.documentElement.clientWidth,
        page: document.documentElement.scrollWidth,
        links: Array.from(document.querySelectorAll('.exchange:last-of-type a')).map((a) => ({ text: a.textContent, right: Math.round(a.getBoundingClientRect().right) })),
      }));
    await screenshot(session!, 'long-citation-link-at-260px');
    const report = JSON.stringify(measured);
    assert.ok(measured.page <= measured.viewport, `the page is no wider than the view: ${report}`);
    assert.ok(measured.links.length >= 2, report);
    for (const link of measured.links) {
      assert.ok(link.right <= measured.viewport, `${link.text} ends inside the view: ${report}`);
    }
  });
});
