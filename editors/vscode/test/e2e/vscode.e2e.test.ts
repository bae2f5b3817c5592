// End to end in real VS Code (code-server in headless Chromium): the packaged extension
// talks to the real copilot-ls, which talks to the scripted fake provider. The tests run
// in order and share one window, like a person working through the features.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe } from 'node:test';
import type { Page } from 'playwright-core';
import {
  answerFrame,
  answerInputBox,
  closeAnswerTab,
  closeSettings,
  coveredInAnswer,
  cursorAt,
  errorNotification,
  focusProblems as focusProblemsOf,
  goToLine,
  searchSettings,
  serverRunning,
  settingItem as settingItemOf,
  showThread,
  notification,
  openFile,
  runCommand,
  THREAD_CONTROLS,
  waitUntil,
  type E2eEnv,
} from './harness';
import { CONFIG_NEW, FOLLOW_UP, NEW_TEXT, NOTES_NEW, QUESTION, SCRIPT } from './scenario';
import { closeSession, extensionLog as extensionLogOf, openSession, requests as requestsOf, screenshot as screenshotOf, stepsOf, type Session } from './session';

let session: Session | undefined;
let env: E2eEnv;
let work: string;
let workspace: string;
let page: Page;
const step = stepsOf(() => session);

function requests() {
  return requestsOf(session!);
}

/** The extension's log so far (its output channel, as VS Code writes it to disk). */
function extensionLog(): string {
  return extensionLogOf(session!);
}

async function ask(command: string, title: string, question: string): Promise<void> {
  await runCommand(page, command);
  await answerInputBox(page, title, question);
}

/** A setting in the open Settings editor, by its label ("Model", "Path", ...). */
function settingItem(label: string) {
  return settingItemOf(page, label);
}

async function focusProblems(): Promise<void> {
  await focusProblemsOf(page);
}

/** A screenshot of a fixed flow, kept with the run's other output. */
async function screenshot(name: string): Promise<void> {
  await screenshotOf(session!, name);
}

/** The Refactor Preview's row for `file`, its checkbox, and its Apply button. */
function refactorPreview(file: string) {
  const row = page.locator(`.monaco-list-row[aria-label*="${file}, making text edits"]`);
  return { row, checkbox: row.locator('.edit-checkbox'), apply: page.locator('.monaco-button', { hasText: /^Apply$/ }).first() };
}

describe('VS Code extension against copilot-ls and the fake provider', { timeout: 600_000 }, () => {
  before(async () => {
    session = await openSession({ name: '', script: SCRIPT, viewport: { width: 1500, height: 950 } });
    ({ env, work, workspace, page } = session);
  });

  after(async () => {
    await closeSession(session);
  });

  step('activates, starts the server and lists its commands in the palette', async () => {
    // The palette only lists extension commands once the extension host has loaded.
    await serverRunning(page).waitFor({ timeout: 60_000 });
    assert.equal(await errorNotification(page, 'copilot-ls').count(), 0, 'no error at startup');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.fill('>copilot-ls: ');
    for (const title of ['copilot-ls: Ask', 'copilot-ls: Follow Up', 'copilot-ls: Clear Answers', 'copilot-ls: Show Last Answer', 'copilot-ls: Go to Citation', 'copilot-ls: Restart Server', 'copilot-ls: Check Setup']) {
      await page.locator('.quick-input-list .label-name', { hasText: new RegExp(`^${title}$`) }).first().waitFor();
    }
    await input.press('Escape');
  });

  step('asks from the palette, shows each tool step in the thread, no notification over it, then the answer', async () => {
    await openFile(page, 'src/main.rs');
    // The empty thread first (a webview takes seconds to load on a busy machine); asking
    // from it still sends the editor the user was in.
    await runCommand(page, 'copilot-ls: Show Last Answer');
    await answerFrame(page).locator('#answer', { hasText: 'No answer yet' }).waitFor();
    await ask('copilot-ls: Ask', 'copilot-ls: Ask', QUESTION);
    // The first tool step shows in the thread while the ask runs; the next model call is
    // slow, and meanwhile the thread says it waits for the model (not the last step).
    const running = answerFrame(page).locator('.exchange[data-state="running"]');
    await running.locator('.step', { hasText: 'search_code' }).waitFor();
    await running.locator('.phase', { hasText: 'waiting for the model' }).waitFor();
    // The thread shows the ask: no progress notification lies over its buttons.
    await notification(page, QUESTION).waitFor({ state: 'hidden' });
    assert.deepEqual(await coveredInAnswer(page, [...THREAD_CONTROLS, '#stop']), []);
    await screenshot('asking-no-toast-over-the-thread');
    const answer = answerFrame(page).locator('#answer');
    await answer.getByText('Tokens are refilled lazily').waitFor({ timeout: 60_000 });
    await answer.locator('a', { hasText: 'src/rate_limit.rs:26-34' }).waitFor();
    await answer.getByText('Document refill').waitFor();
    // The reasoning turn is collapsed under its tool calls, which show as progress lines.
    const reasoning = answer.locator('details.reasoning', { hasText: 'Reading the bucket' });
    await reasoning.waitFor();
    assert.equal(await reasoning.getAttribute('open'), null, 'reasoning starts collapsed');
    await answer.locator('.step', { hasText: 'search_code' }).first().waitFor();
    // Code blocks are highlighted, with a copy button.
    await answer.locator('.code-block pre code .hljs-keyword', { hasText: 'fn' }).first().waitFor();
    await answer.locator('.code-block button.copy').first().click();
    await waitUntil('the copy to reach the clipboard', () => (extensionLog().includes('copied a code block') ? true : undefined));
    // Links underline the same in paragraphs as in lists.
    const decoration = (l: ReturnType<typeof answer.locator>) => l.evaluate((el) => getComputedStyle(el).textDecorationLine);
    assert.equal(await decoration(answer.locator('.answer p a').first()), 'underline');
    assert.equal(await decoration(answer.locator('.answer li a').first()), 'underline');
    await screenshot('answer');

    const sent = requests();
    assert.equal(sent.length, 3, 'one model call per scripted turn');
    const status = page.locator('.statusbar-item', { hasText: 'copilot-ls' }).first();
    await status.locator('.codicon-comment-discussion').waitFor();
    assert.ok(sent.every((r) => r.path.endsWith('/v1/chat/completions')), JSON.stringify(sent.map((r) => r.path)));
    assert.ok(JSON.stringify(sent[0].body).includes(QUESTION));
    // Asked from main.rs: the server was told which editor the question came from.
    assert.ok(JSON.stringify(sent[0].body).includes('main.rs'), 'the active editor is part of the context');
  });

  step('applies from the thread an edit to a file that is not open', async () => {
    // docs/notes.md was never opened: VS Code has no document for it yet.
    const edit = answerFrame(page).locator('.edit', { hasText: 'Update the notes' });
    await edit.locator('pre.diff .added', { hasText: 'see issue 7' }).waitFor();
    await edit.locator('button.apply').click();
    const preview = refactorPreview('notes.md');
    await preview.apply.waitFor();
    // The change is ticked: Apply right away applies it.
    await preview.checkbox.waitFor();
    assert.equal(await preview.checkbox.getAttribute('aria-checked'), 'true', 'the suggested change starts ticked');
    await screenshot('apply-to-an-unopened-file');
    await preview.apply.click();
    await edit.locator('.edit-note', { hasText: 'applied' }).waitFor();
    await openFile(page, 'docs/notes.md');
    await page.locator('.view-lines', { hasText: 'see issue 7' }).first().waitFor();
    await page.keyboard.press('Control+S');
    await waitUntil('the notes edit on disk', () => readFileSync(path.join(workspace, 'docs/notes.md'), 'utf8').includes(NOTES_NEW) || undefined);
    assert.ok(!extensionLog().includes('Illegal argument'), 'no failure in the extension');
    await showThread(page);
  });

  step('puts the citations in the Problems panel, from copilot-ls', async () => {
    await focusProblems();
    const rows = page.locator('.markers-panel .monaco-list-row');
    await rows.filter({ hasText: 'refill before taking a token' }).first().waitFor();
    await rows.filter({ hasText: 'burst and rate come from the environment' }).first().waitFor();
    const text = await page.locator('.markers-panel').innerText();
    assert.match(text, /copilot-ls/, 'the source is shown as copilot-ls');
    assert.doesNotMatch(text, /copilot(?!-ls)/i, 'never as copilot alone');
  });

  step('opens a citation link at the cited line', async () => {
    await answerFrame(page).locator('#answer a', { hasText: 'src/rate_limit.rs:26-34' }).click();
    await page.locator('.tabs-container .tab.active[aria-label*="rate_limit.rs"]').first().waitFor();
    await cursorAt(page, 26);
  });

  step('jumps to a citation with Go to Citation', async () => {
    await runCommand(page, 'copilot-ls: Go to Citation');
    const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: 'src/config.rs:12-18' }).first();
    await pick.waitFor();
    await pick.click();
    await page.locator('.tabs-container .tab.active[aria-label*="config.rs"]').first().waitFor();
    await cursorAt(page, 12);
  });

  step('lists the citations in the Citations view, headed copilot-ls, never Copilot', async () => {
    const header = page.locator('.pane-header', { has: page.locator('.title', { hasText: /^Citations$/ }) });
    if ((await header.getAttribute('aria-expanded')) !== 'true') {
      await header.click();
    }
    // The header as shown (VS Code capitalizes a view's name, not its description).
    await header.locator('.description', { hasText: 'copilot-ls' }).waitFor();
    const shown = await header.innerText();
    assert.doesNotMatch(shown, /Copilot/, shown);
    const tree = page.locator('.pane', { has: header });
    await tree.locator('.monaco-list-row', { hasText: 'Document refill' }).waitFor();
    await tree.locator('.monaco-list-row', { hasText: 'src/config.rs:12-18' }).waitFor();
    await screenshot('citations-view');
    await tree.locator('.monaco-list-row', { hasText: 'src/rate_limit.rs:26-34' }).click();
    await page.locator('.tabs-container .tab.active[aria-label*="rate_limit.rs"]').first().waitFor();
    await cursorAt(page, 26);
    await header.click();
  });

  step('applies the suggested edit as a quick fix through the refactor preview, ticked', async () => {
    await openFile(page, 'src/rate_limit.rs');
    await goToLine(page, 35);
    const fix = page.locator('.action-widget .monaco-list-row', { hasText: 'copilot-ls: Document refill' }).first();
    // Ctrl+. right after moving the cursor can race VS Code's own code action request;
    // if the menu shows without our fix, close it and ask again.
    let misses = 0;
    await waitUntil('the copilot-ls quick fix in the Ctrl+. menu', async () => {
      await page.keyboard.press('Control+.');
      try {
        await fix.waitFor({ timeout: 5000 });
        return true;
      } catch {
        misses++;
        await page.screenshot({ path: path.join(env.outDir, `quickfix-miss-${misses}.png`) });
        await page.keyboard.press('Escape');
        return undefined;
      }
    }, 40_000);
    assert.equal(await page.locator('.action-widget .monaco-list-row', { hasText: /Copilot: / }).count(), 0, 'titled copilot-ls, not Copilot');
    await fix.click();
    // The refactor preview shows the change, ticked: its Apply applies it.
    const preview = refactorPreview('rate_limit.rs');
    await preview.apply.waitFor();
    await preview.checkbox.waitFor();
    assert.equal(await preview.checkbox.getAttribute('aria-checked'), 'true', 'a suggested edit starts ticked');
    await screenshot('refactor-preview-ticked');
    await preview.apply.click();
    await page.locator('.view-lines', { hasText: 'Adds the tokens earned since the last refill' }).first().waitFor();
    await page.keyboard.press('Control+S');
    await waitUntil('the edit on disk', () => readFileSync(path.join(workspace, 'src/rate_limit.rs'), 'utf8').includes(NEW_TEXT) || undefined);
  });

  step('applies a suggested edit from the thread through the refactor preview, ticked', async () => {
    await showThread(page);
    const edit = answerFrame(page).locator('.edit', { hasText: 'Document port' });
    // The change shows as a diff in the thread.
    await edit.locator('pre.diff .added', { hasText: '/// The port to listen on.' }).waitFor();
    await edit.locator('button.apply').click();
    const preview = refactorPreview('config.rs');
    await preview.apply.waitFor();
    await preview.checkbox.waitFor();
    assert.equal(await preview.checkbox.getAttribute('aria-checked'), 'true', 'pressing Apply right away applies it');
    await preview.apply.click();
    // Applied: the server withdraws it, and the thread says so.
    await edit.locator('.edit-note', { hasText: /^applied$/ }).waitFor();
    assert.ok(extensionLog().includes('suggested edit') && !/suggested edit \S+: not applied/.test(extensionLog()), 'applied, not "not applied"');
    await openFile(page, 'src/config.rs');
    await page.locator('.view-lines', { hasText: 'The port to listen on.' }).first().waitFor();
    await page.keyboard.press('Control+S');
    await waitUntil('the thread edit on disk', () => readFileSync(path.join(workspace, 'src/config.rs'), 'utf8').includes(CONFIG_NEW) || undefined);
    // config.rs opened in the thread's group; bring the thread back.
    await showThread(page);
  });

  step('follows the cited text after the edit: citation links and the answer\'s own links alike', async () => {
    // The edit above added a line at the top of config.rs: the server republished the
    // citation's diagnostic one line down; the thread's links follow it, the link in the
    // answer's text too, as the Citations view and Go to Citation do.
    const answer = answerFrame(page).locator('.exchange').first().locator('.answer');
    const mention = answer.locator('p a', { hasText: /^src\/config\.rs:\d+$/ });
    await answer.locator('p a', { hasText: 'src/config.rs:13' }).waitFor();
    assert.deepEqual(await mention.allInnerTexts(), ['src/config.rs:13']);
    await screenshot('answer-links-follow');
    await mention.click();
    await page.locator('.tabs-container .tab.active[aria-label*="config.rs"]').first().waitFor();
    await cursorAt(page, 13);
    await showThread(page);
    const link = answerFrame(page).locator('#answer a', { hasText: 'src/config.rs:13-19' });
    await link.waitFor();
    await link.click();
    await page.locator('.tabs-container .tab.active[aria-label*="config.rs"]').first().waitFor();
    await cursorAt(page, 13);
    await runCommand(page, 'copilot-ls: Go to Citation');
    const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: 'src/config.rs:13-19' }).first();
    await pick.waitFor();
    await page.keyboard.press('Escape');
    await showThread(page);
  });

  step('follows up from the thread\'s input box, in the same conversation and thread', async () => {
    const question = answerFrame(page).locator('#question');
    await question.fill(FOLLOW_UP);
    await question.press('Enter');
    const thread = answerFrame(page).locator('#answer');
    await thread.getByText('Follow-up answer').waitFor({ timeout: 60_000 });
    // The first exchange is still there above it.
    assert.equal(await thread.locator('.exchange').count(), 2);
    const first = thread.locator('.exchange').first();
    await first.getByText('Tokens are refilled lazily').waitFor();
    // Its applied edits still say so; its links stay where they last were.
    assert.deepEqual(await first.locator('.edit-note').allInnerTexts(), ['applied', 'applied', 'applied']);
    await first.locator('.answer p a', { hasText: 'src/config.rs:13' }).waitFor();
    await screenshot('applied-after-follow-up');
    const sent = requests();
    assert.equal(sent.length, 4);
    const body = JSON.stringify(sent[3].body);
    assert.ok(body.includes(FOLLOW_UP));
    // The server keeps the conversation: the first question is sent again as history.
    assert.ok(body.includes(QUESTION), 'the follow-up carries the earlier question');
  });

  step('shows the last answer again after its view was closed', async () => {
    await closeAnswerTab(page);
    await runCommand(page, 'copilot-ls: Show Last Answer');
    await answerFrame(page).locator('#answer').getByText('Follow-up answer').waitFor();
  });

  step('asks about the selection', async () => {
    await openFile(page, 'src/rate_limit.rs');
    await goToLine(page, 36);
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Shift+ArrowDown');
    }
    await page.locator('.statusbar-item[id="status.editor.selection"]', { hasText: 'selected' }).first().waitFor();
    await runCommand(page, 'copilot-ls: Ask About Selection');
    // Enter alone asks the default question about the selected code.
    await answerInputBox(page, 'copilot-ls: Ask About Selection', '');
    await answerFrame(page).locator('#answer').getByText('Selection answer').waitFor({ timeout: 60_000 });
    const sent = requests();
    assert.equal(sent.length, 5);
    const body = JSON.stringify(sent[4].body);
    assert.ok(body.includes('Explain the selected code.'), 'the default question');
    // The selection reaches the model as context (the server reads AskParams.range).
    assert.match(body, /src\/rate_limit\.rs with lines 36-/, 'the selected lines are part of the context');
    // (The quick fix above added a line, so the selection starts at `fn refill`.)
    assert.ok(body.includes('fn refill(&mut self) {\\n        let now = Instant::now();'), 'the selected text is part of the context');
  });

  step('streams the answer onto the screen before the reply arrives', async () => {
    // Only this ask's deltas count (the view was open before it started).
    // "total:extension" ms per delta: arrival in the extension to the frame showing it,
    // and the part spent before the extension posted it to the view.
    const measured = async () =>
      ((await answerFrame(page).locator('body').getAttribute('data-delta-latencies')) ?? '')
        .split(',')
        .filter((x) => x !== '')
        .map((x) => x.split(':').map(Number) as [number, number]);
    const before = (await measured()).length;
    await ask('copilot-ls: Ask', 'copilot-ls: Ask', 'How fast does it stream?');
    const streaming = answerFrame(page).locator('.exchange[data-state="running"] .streaming');
    await streaming.filter({ hasText: 'Streaming answer' }).waitFor({ timeout: 60_000 });
    const texts = async () => (await streaming.allInnerTexts()).join('');
    const first = (await texts()).length;
    // Still running (no reply yet) and longer: the text grows as the deltas arrive.
    await waitUntil('the streamed text to grow before the reply', async () => ((await texts()).length > first ? true : undefined));
    const answer = answerFrame(page).locator('.exchange[data-state="answered"]', { hasText: 'How fast does it stream?' });
    await answer.getByText('so idle buckets cost nothing at all.').waitFor({ timeout: 60_000 });
    assert.equal(await answer.locator('.streaming').count(), 0, 'the reply replaced the streamed text');
    const samples = (await measured()).slice(before);
    const stats = (xs: number[]) => {
      const sorted = [...xs].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
      return { median: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1] };
    };
    const total = stats(samples.map((s) => s[0]));
    const ours = stats(samples.map((s) => s[1]));
    const report =
      `delta arrival to frame: ${samples.length} deltas, median ${total.median} ms, p95 ${total.p95} ms, max ${total.max} ms ` +
      `(in the extension before posting: median ${ours.median} ms, max ${ours.max} ms; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} CPUs)`;
    writeFileSync(path.join(env.outDir, 'delta-latency.txt'), `${report}\n${samples.map((s) => s.join(':')).join(',')}\n`);
    console.log(report);
    assert.ok(samples.length >= 10, report);
    // The target is 100 ms; on a loaded machine VS Code's own webview messaging takes most
    // of it, so this only fails when deltas wait for something (the reply, a batch): the
    // stream lasts about 3 s.
    assert.ok(total.median < 1000, report);
    assert.ok(ours.max < 100, report);
  });

  step('stays busy while any ask runs: a second ask that finishes does not make it idle', async () => {
    await ask('copilot-ls: Ask', 'copilot-ls: Ask', 'Which ports does it listen on?');
    const running = answerFrame(page).locator('.exchange[data-state="running"]', { hasText: 'Which ports does it listen on?' });
    await running.waitFor();
    await waitUntil('the hanging provider call', () => requests().length === 7 || undefined);
    // Its model call has not answered: the thread says so, not a tool step; and no
    // notification lies over the thread's buttons (a click on Stop reaches Stop).
    await running.locator('.phase', { hasText: 'waiting for the model' }).waitFor();
    await notification(page, 'Which ports does it listen on?').waitFor({ state: 'hidden' });
    assert.deepEqual(await coveredInAnswer(page, [...THREAD_CONTROLS, '#stop']), []);
    await ask('copilot-ls: Ask', 'copilot-ls: Ask', 'What else is there?');
    await answerFrame(page).locator('#answer').getByText('Second answer, while the first still runs.').waitFor({ timeout: 60_000 });
    const status = page.locator('.statusbar-item', { hasText: 'copilot-ls' }).first();
    await status.locator('.codicon-loading').waitFor();
    assert.equal(await status.locator('.codicon-comment-discussion').count(), 0, 'still busy: the first ask runs');
  });

  step('shows a running ask as a notification once the thread is closed; cancels from it, then goes idle', async () => {
    assert.equal(await notification(page, 'Which ports does it listen on?').count(), 0);
    await closeAnswerTab(page);
    // Out of view, the thread no longer shows the ask: a notification does, with Cancel.
    const progress = notification(page, 'Which ports does it listen on?');
    await progress.getByText('waiting for the model').waitFor();
    await screenshot('progress-notification-with-the-thread-closed');
    assert.equal(requests().length, 8);
    await progress.locator('.monaco-button', { hasText: 'Cancel' }).click();
    await progress.waitFor({ state: 'hidden' });
    await page.locator('.statusbar-item', { hasText: 'copilot-ls' }).first().locator('.codicon-comment-discussion').waitFor();
    await showThread(page);
  });

  step('stops a question typed into the thread with its Stop button, which nothing covers', async () => {
    const question = answerFrame(page).locator('#question');
    await question.fill('Will this be stopped?');
    await question.press('Enter');
    const running = answerFrame(page).locator('.exchange[data-state="running"]', { hasText: 'Will this be stopped?' });
    await running.waitFor();
    await waitUntil('the hanging provider call', () => requests().length === 9 || undefined);
    const stop = answerFrame(page).locator('#stop');
    await stop.waitFor();
    assert.deepEqual(await coveredInAnswer(page, ['#stop']), []);
    await stop.click();
    await answerFrame(page).locator('.exchange[data-state="cancelled"]', { hasText: 'Will this be stopped?' }).getByText('Cancelled.').waitFor();
    await stop.waitFor({ state: 'hidden' });
    await page.locator('.statusbar-item', { hasText: 'copilot-ls' }).first().locator('.codicon-comment-discussion').waitFor();
  });

  step('sends a changed setting to the running server', async () => {
    mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'copilot-ls.model': 'fake-2' }));
    await waitUntil('the extension to send the new settings', () => (extensionLog().includes('"model":"fake-2"') ? true : undefined));
  });

  step('shows a provider error in the thread with a button to the setting; no notification over it', async () => {
    await ask('copilot-ls: Ask', 'copilot-ls: Ask', 'Why does this fail?');
    // The reply is in once the thread marks the question failed.
    const failed = answerFrame(page).locator('.exchange[data-state="failed"]', { hasText: 'Why does this fail?' });
    await failed.waitFor({ timeout: 60_000 });
    const error = failed.locator('.error');
    await error.getByText(/^provider returned 401/).waitFor();
    assert.doesNotMatch(await error.innerText(), /copilot-ls: copilot-ls:/);
    // Neither this error nor the cancelled asks left a notification over the thread.
    assert.equal(await errorNotification(page, /./).count(), 0, await page.locator('.notifications-toasts').innerText());
    assert.deepEqual(await coveredInAnswer(page, THREAD_CONTROLS), []);
    await screenshot('error-in-the-thread');
    assert.equal(requests().length, 10, 'a 401 is not retried, the cancelled calls are not repeated');
    assert.equal(requests()[9].body.model, 'fake-2', 'didChangeConfiguration reached the server');
    await error.locator('button.error-action', { hasText: 'Open Settings' }).click();
    await page.locator('.settings-editor').waitFor();
    const search = page.locator('.settings-editor .suggest-input-container .view-lines');
    await search.filter({ hasText: 'copilot-ls.apiKeyEnv' }).waitFor();
    await page.locator('.settings-editor .setting-item-label', { hasText: 'Api Key Env' }).first().waitFor();
    // Plain strings: each is a text box in the Settings UI, not "Edit in settings.json".
    const settings: Array<[string, string]> = [
      ['copilot-ls.baseUrl', 'Base Url'],
      ['copilot-ls.model', 'Model'],
      ['copilot-ls.apiKeyEnv', 'Api Key Env'],
      ['copilot-ls.server.path', 'Path'],
      ['copilot-ls.maxOutputTokens', 'Max Output Tokens'],
    ];
    for (const [key, label] of settings) {
      await searchSettings(page, key, '1 Setting Found');
      const item = settingItem(label);
      await item.waitFor();
      await item.locator('input').first().waitFor();
      assert.equal(await item.getByText('Edit in settings.json').filter({ visible: true }).count(), 0, label);
    }
    // None of them reads like GitHub Copilot's: no "Copilot: Base Url", as shown.
    await searchSettings(page, '@ext:copilot-ls.copilot-ls', /^\d+ Settings Found$/);
    await settingItem('Base Url').waitFor();
    const shown = await page.locator('.settings-editor .settings-tree-container').innerText();
    assert.doesNotMatch(shown, /Copilot:/, shown);
    await screenshot('settings');
    await closeSettings(page);
  });

  step('reads an old copilot.* setting, with a deprecation note, and answers once without a model', async () => {
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'copilot-ls.model': 'fake-2', 'copilot.provider': 'none' }));
    const note = page.locator('.notifications-toasts .notification-list-item', { hasText: 'deprecated' });
    await note.getByText(/copilot\.provider → copilot-ls\.provider/).waitFor();
    await waitUntil('the old key to reach the server', () => (extensionLog().includes('"provider":"none"') ? true : undefined));
    await screenshot('deprecated-setting');
    await note.hover();
    await note.locator('.codicon-notifications-clear').click();
    await note.waitFor({ state: 'hidden' });
    await ask('copilot-ls: Ask', 'copilot-ls: Ask', QUESTION);
    const answered = answerFrame(page).locator('.exchange[data-state="answered"]', { hasText: QUESTION });
    await answered.locator('.answer a', { hasText: /^src\/rate_limit\.rs:\d+$/ }).first().waitFor({ timeout: 60_000 });
    const text = await answered.locator('.answer').innerText();
    assert.equal(text.split('No model is configured').length - 1, 1, text);
    assert.equal(requests().length, 10, 'no model was called');
    await screenshot('no-model-answer');
  });

  step('clears the answers and their diagnostics', async () => {
    await runCommand(page, 'copilot-ls: Clear Answers');
    await answerFrame(page).locator('#answer', { hasText: 'No answer' }).waitFor();
    await focusProblems();
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'refill before taking a token' }).waitFor({ state: 'detached' });
    await page.locator('.markers-panel', { hasText: 'No problems have been detected' }).waitFor();
  });

  step('reports a missing server binary; Open Settings lands on the setting', async () => {
    // A workspace setting, as a user would set it for one project; the extension
    // restarts the server when copilot-ls.server.path changes.
    mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'copilot-ls.server.path': path.join(work, 'no-such-copilot-ls') }));
    const error = errorNotification(page, 'copilot-ls.server.path points to');
    await error.waitFor();
    await page.locator('.statusbar-item', { has: page.locator('.codicon-error') }).filter({ hasText: 'copilot-ls' }).waitFor();
    await error.locator('.monaco-button', { hasText: 'Open Settings' }).click();
    await page.locator('.settings-editor').waitFor();
    const item = settingItem('Path');
    await item.waitFor();
    await item.locator('input').first().waitFor();
    await page.locator('.settings-editor').getByText('1 Setting Found').waitFor();
    assert.equal(await item.getByText('cannot be applied').filter({ visible: true }).count(), 0, 'the setting applies in this (remote) window');
    await closeSettings(page);
  });

  step('Restart Server reads copilot-ls.server.path again', async () => {
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'copilot-ls.server.path': env.copilotLs }));
    await serverRunning(page).waitFor({ timeout: 60_000 });
    await runCommand(page, 'copilot-ls: Restart Server');
    await notification(page, 'copilot-ls: server restarted.').waitFor();
    await serverRunning(page).waitFor();
    assert.ok(extensionLog().includes(`using copilot-ls at ${env.copilotLs} (from copilot-ls.server.path)`));
  });
});
