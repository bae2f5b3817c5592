// End to end in real VS Code (code-server in headless Chromium): the packaged extension
// talks to the real copilot-ls, which talks to the scripted fake provider. The tests run
// in order and share one window, like a person working through the features.

import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  answerFrame,
  answerInputBox,
  closeSettings,
  cursorAt,
  errorNotification,
  serverRunning,
  e2eEnv,
  notification,
  openFile,
  runCommand,
  startCodeServer,
  startFakeProvider,
  launchBrowser,
  stopAll,
  waitUntil,
  type CodeServer,
  type E2eEnv,
} from './harness';

const QUESTION = 'How does the rate limiter refill its tokens?';
const FOLLOW_UP = 'And where are its limits configured?';
const OLD_TEXT = '    fn refill(&mut self) {\n';
const NEW_TEXT = '    /// Adds the tokens earned since the last refill, up to capacity.\n    fn refill(&mut self) {\n';

const STREAMED =
  'Streaming answer: the bucket refills lazily, adding the elapsed time multiplied by the refill rate, ' +
  'capped at its capacity, every time a request tries to take a token, so idle buckets cost nothing at all.';
const CONFIG_OLD = '    pub port: u16,\n';
const CONFIG_NEW = '    /// The port to listen on.\n    pub port: u16,\n';

// One step per model call, consumed in order by the asks below.
const SCRIPT = {
  steps: [
    { tool_calls: [{ id: 'call_1', name: 'search_code', arguments: { pattern: 'TokenBucket' } }] },
    {
      // Slow enough for the progress notification to show the first tool step, also on a
      // loaded machine while the answer view opens.
      delay_ms: 3000,
      text: 'Reading the bucket and proposing doc comments.',
      tool_calls: [
        { id: 'call_2', name: 'read_file', arguments: { path: 'src/rate_limit.rs', start_line: 1, end_line: 40 } },
        {
          id: 'call_3',
          name: 'propose_edit',
          arguments: { path: 'src/rate_limit.rs', old_text: OLD_TEXT, new_text: NEW_TEXT, title: 'Document refill' },
        },
        {
          id: 'call_3b',
          name: 'propose_edit',
          arguments: { path: 'src/config.rs', old_text: CONFIG_OLD, new_text: CONFIG_NEW, title: 'Document port' },
        },
      ],
    },
    {
      tool_calls: [
        {
          id: 'call_4',
          name: 'answer',
          arguments: {
            answer:
              'Tokens are refilled lazily: `try_acquire` calls `refill` first (src/rate_limit.rs:26), ' +
              'which adds `elapsed * refill_per_sec` tokens, capped at `capacity`.\n\n' +
              '```rust\nfn refill(&mut self) {\n    let now = Instant::now();\n}\n```',
            citations: [
              { path: 'src/rate_limit.rs', line: 26, end_line: 34, note: 'refill before taking a token' },
              { path: 'src/config.rs', line: 12, end_line: 18, note: 'burst and rate come from the environment' },
            ],
          },
        },
      ],
    },
    { text: 'Follow-up answer: the limits come from `TOLLBOOTH_BURST` and `TOLLBOOTH_RPS` in src/config.rs:11.' },
    { text: 'Selection answer: `refill` adds the tokens earned since src/rate_limit.rs:37.' },
    // A slow model: the answer streams word by word.
    { text: STREAMED, chunk_delay_ms: 80 },
    { hang: true },
    { text: 'Second answer, while the first still runs.' },
    { hang: true },
    { status: 401, body: '{"error":{"message":"Incorrect API key provided"}}' },
  ],
};

let env: E2eEnv;
let work: string;
let workspace: string;
let record: string;
let server: CodeServer;
let browser: Browser;
let page: Page;

function requests(): Array<{ path: string; body: { messages?: Array<{ role: string; content: unknown }> } }> {
  try {
    return readFileSync(record, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

/** The extension's log so far (its output channel, as VS Code writes it to disk). */
function extensionLog(): string {
  const logs = path.join(work, 'home', 'user-data', 'logs');
  return readdirSync(logs, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(path.join('copilot-ls.copilot-ls', 'copilot-ls.log')))
    .map((f) => readFileSync(path.join(logs, f), 'utf8'))
    .join('\n');
}

async function ask(command: string, title: string, question: string): Promise<void> {
  await runCommand(page, command);
  await answerInputBox(page, title, question);
}

/** A setting in the open Settings editor, by its label ("Model", "Path", ...). */
function settingItem(label: string) {
  return page.locator('.settings-editor .setting-item', { has: page.locator('.setting-item-label', { hasText: new RegExp(`^${label}$`) }) }).first();
}

async function focusProblems(): Promise<void> {
  await runCommand(page, 'View: Focus Problems (Errors, Warnings, Infos)');
  await page.locator('.markers-panel').waitFor({ state: 'visible' });
}

/** `it`, plus a screenshot of the window when the test fails. */
function step(name: string, fn: () => Promise<void>): void {
  it(name, async () => {
    try {
      await fn();
    } catch (err) {
      const slug = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
      await page?.screenshot({ path: path.join(env.outDir, `failed-${slug}.png`) }).catch(() => undefined);
      throw err;
    }
  });
}

describe('VS Code extension against copilot-ls and the fake provider', { timeout: 600_000 }, () => {
  before(async () => {
    env = e2eEnv();
    mkdirSync(env.outDir, { recursive: true });
    work = mkdtempSync(path.join(os.tmpdir(), 'copilot-vscode-e2e-'));
    workspace = path.join(work, 'tollbooth');
    cpSync(env.fixture, workspace, { recursive: true });
    const script = path.join(work, 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT, null, 2));
    record = path.join(env.outDir, 'provider-requests.jsonl');
    writeFileSync(record, '');
    const port = await startFakeProvider(env.fakeProvider, script, record, env.outDir);

    server = await startCodeServer(env, path.join(work, 'home'), workspace, {
      'copilot.server.path': env.copilotLs,
      'copilot.provider': 'openai',
      'copilot.baseUrl': `http://127.0.0.1:${port}/v1`,
      'copilot.model': 'fake',
      'copilot.requestTimeoutSecs': 30,
      'copilot.trace.server': 'verbose',
      'workbench.startupEditor': 'none',
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'chat.disableAIFeatures': true,
      'telemetry.telemetryLevel': 'off',
      'security.workspace.trust.enabled': false,
      'git.enabled': false,
      'extensions.ignoreRecommendations': true,
      'editor.minimap.enabled': false,
      // The edit must reach the disk only when the test saves it.
      'files.autoSave': 'off',
    });
    browser = await launchBrowser(env);
    page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
    page.setDefaultTimeout(30_000);
    await page.goto(`${server.url}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    // The explorer shows the workspace once the workbench has restored.
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'src' }).first().waitFor({ timeout: 90_000 });
  });

  after(async () => {
    if (page) {
      await page.screenshot({ path: path.join(env.outDir, 'final.png') }).catch(() => undefined);
    }
    await browser?.close().catch(() => undefined);
    stopAll();
    if (work) {
      // Keep the extension's own log (it includes the server's stderr) next to the rest.
      const logs = path.join(work, 'home', 'user-data', 'logs');
      const found = readdirSync(logs, { recursive: true, encoding: 'utf8' }).filter((f) => path.basename(path.dirname(f)) === 'copilot-ls.copilot-ls');
      for (const f of found) {
        cpSync(path.join(logs, f), path.join(env.outDir, `extension-${path.basename(f)}`));
      }
      rmSync(work, { recursive: true, force: true });
    }
  });

  step('activates, starts the server and lists its commands in the palette', async () => {
    // The palette only lists extension commands once the extension host has loaded.
    await serverRunning(page).waitFor({ timeout: 60_000 });
    assert.equal(await errorNotification(page, 'copilot-ls').count(), 0, 'no error at startup');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.fill('>copilot-ls: ');
    for (const title of ['copilot-ls: Ask', 'copilot-ls: Follow Up', 'copilot-ls: Clear Answers', 'copilot-ls: Show Last Answer', 'copilot-ls: Go to Citation', 'copilot-ls: Restart Server']) {
      await page.locator('.quick-input-list .label-name', { hasText: new RegExp(`^${title}$`) }).first().waitFor();
    }
    await input.press('Escape');
  });

  step('asks from the palette, shows each tool step, then the answer', async () => {
    await openFile(page, 'src/main.rs');
    // The empty thread first (a webview takes seconds to load on a busy machine); asking
    // from it still sends the editor the user was in.
    await runCommand(page, 'copilot-ls: Show Last Answer');
    await answerFrame(page).locator('#answer', { hasText: 'No answer yet' }).waitFor();
    await ask('copilot-ls: Ask', 'copilot-ls: Ask', QUESTION);
    // The first tool step shows in the thread while the ask runs; the next model call is
    // slow, and meanwhile the notification says it waits for the model (not the last step).
    const running = answerFrame(page).locator('.exchange[data-state="running"]');
    await running.locator('.step', { hasText: 'search_code' }).waitFor();
    await notification(page, 'waiting for the model').waitFor();
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
    await page.screenshot({ path: path.join(env.outDir, 'answer.png') });

    const sent = requests();
    assert.equal(sent.length, 3, 'one model call per scripted turn');
    const status = page.locator('.statusbar-item', { hasText: 'copilot-ls' }).first();
    await status.locator('.codicon-comment-discussion').waitFor();
    assert.ok(sent.every((r) => r.path.endsWith('/v1/chat/completions')), JSON.stringify(sent.map((r) => r.path)));
    assert.ok(JSON.stringify(sent[0].body).includes(QUESTION));
    // Asked from main.rs: the server was told which editor the question came from.
    assert.ok(JSON.stringify(sent[0].body).includes('main.rs'), 'the active editor is part of the context');
  });

  step('puts the citations in the Problems panel', async () => {
    await focusProblems();
    const rows = page.locator('.markers-panel .monaco-list-row');
    await rows.filter({ hasText: 'refill before taking a token' }).first().waitFor();
    await rows.filter({ hasText: 'burst and rate come from the environment' }).first().waitFor();
    const text = (await page.locator('.markers-panel').innerText()).toLowerCase();
    assert.ok(text.includes('copilot'), 'source copilot is shown');
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

  step('lists the citations in the Copilot Citations view', async () => {
    const header = page.locator('.pane-header', { hasText: 'copilot-ls Citations' });
    if ((await header.getAttribute('aria-expanded')) !== 'true') {
      await header.click();
    }
    const tree = page.locator('.pane', { has: header });
    await tree.locator('.monaco-list-row', { hasText: 'Document refill' }).waitFor();
    await tree.locator('.monaco-list-row', { hasText: 'src/config.rs:12-18' }).waitFor();
    await tree.locator('.monaco-list-row', { hasText: 'src/rate_limit.rs:26-34' }).click();
    await page.locator('.tabs-container .tab.active[aria-label*="rate_limit.rs"]').first().waitFor();
    await cursorAt(page, 26);
    await header.click();
  });

  step('applies the suggested edit as a quick fix through the refactor preview', async () => {
    await openFile(page, 'src/rate_limit.rs');
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible' });
    await input.fill(':35');
    await input.press('Enter');
    await cursorAt(page, 35);
    const fix = page.locator('.action-widget .monaco-list-row', { hasText: 'Copilot: Document refill' }).first();
    // Ctrl+. right after moving the cursor can race VS Code's own code action request;
    // if the menu shows without our fix, close it and ask again.
    let misses = 0;
    await waitUntil('the Copilot quick fix in the Ctrl+. menu', async () => {
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
    await fix.click();
    // needsConfirmation makes VS Code show the refactor preview, with the change
    // unticked: nothing is applied until the user ticks it and presses Apply.
    const apply = page.locator('.monaco-button', { hasText: /^Apply$/ }).first();
    await apply.waitFor();
    const fileRow = page.locator('.monaco-list-row[aria-label*="rate_limit.rs, making text edits"]');
    const checkbox = fileRow.locator('.edit-checkbox');
    await checkbox.waitFor();
    assert.equal(await checkbox.getAttribute('aria-checked'), 'false', 'a suggested edit starts unticked');
    await checkbox.click();
    await fileRow.locator('.edit-checkbox[aria-checked="true"]').waitFor();
    await apply.click();
    await page.locator('.view-lines', { hasText: 'Adds the tokens earned since the last refill' }).first().waitFor();
    await page.keyboard.press('Control+S');
    await waitUntil('the edit on disk', () => readFileSync(path.join(workspace, 'src/rate_limit.rs'), 'utf8').includes(NEW_TEXT) || undefined);
  });

  step('applies a suggested edit from the thread through the refactor preview', async () => {
    const edit = answerFrame(page).locator('.edit', { hasText: 'Document port' });
    // The change shows as a diff in the thread.
    await edit.locator('pre.diff .added', { hasText: '/// The port to listen on.' }).waitFor();
    await edit.locator('button.apply').click();
    const apply = page.locator('.monaco-button', { hasText: /^Apply$/ }).first();
    await apply.waitFor();
    const fileRow = page.locator('.monaco-list-row[aria-label*="config.rs, making text edits"]');
    const checkbox = fileRow.locator('.edit-checkbox');
    await checkbox.waitFor();
    assert.equal(await checkbox.getAttribute('aria-checked'), 'false', 'nothing is applied before the user ticks it');
    await checkbox.click();
    await fileRow.locator('.edit-checkbox[aria-checked="true"]').waitFor();
    await apply.click();
    // Applied: the server withdraws it, and the thread no longer offers it.
    await edit.locator('.edit-note', { hasText: 'applied' }).waitFor();
    await openFile(page, 'src/config.rs');
    await page.locator('.view-lines', { hasText: 'The port to listen on.' }).first().waitFor();
    await page.keyboard.press('Control+S');
    await waitUntil('the thread edit on disk', () => readFileSync(path.join(workspace, 'src/config.rs'), 'utf8').includes(CONFIG_NEW) || undefined);
    // config.rs opened in the thread's group; bring the thread back.
    await runCommand(page, 'copilot-ls: Show Last Answer');
    await answerFrame(page).locator('#question').waitFor();
  });

  step('follows a citation to where its text moved after the edit', async () => {
    // The edit above added a line at the top of config.rs: the server republished the
    // citation's diagnostic one line down, and the thread's link follows it.
    const link = answerFrame(page).locator('#answer a', { hasText: 'src/config.rs:13-19' });
    await link.waitFor();
    await link.click();
    await page.locator('.tabs-container .tab.active[aria-label*="config.rs"]').first().waitFor();
    await cursorAt(page, 13);
    await runCommand(page, 'copilot-ls: Go to Citation');
    const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: 'src/config.rs:13-19' }).first();
    await pick.waitFor();
    await page.keyboard.press('Escape');
    await runCommand(page, 'copilot-ls: Show Last Answer');
    await answerFrame(page).locator('#question').waitFor();
  });

  step('follows up from the thread\'s input box, in the same conversation and thread', async () => {
    const question = answerFrame(page).locator('#question');
    await question.fill(FOLLOW_UP);
    await question.press('Enter');
    const thread = answerFrame(page).locator('#answer');
    await thread.getByText('Follow-up answer').waitFor({ timeout: 60_000 });
    // The first exchange is still there above it.
    assert.equal(await thread.locator('.exchange').count(), 2);
    await thread.locator('.exchange').first().getByText('Tokens are refilled lazily').waitFor();
    const sent = requests();
    assert.equal(sent.length, 4);
    const body = JSON.stringify(sent[3].body);
    assert.ok(body.includes(FOLLOW_UP));
    // The server keeps the conversation: the first question is sent again as history.
    assert.ok(body.includes(QUESTION), 'the follow-up carries the earlier question');
  });

  step('shows the last answer again after its view was closed', async () => {
    const tab = page.locator('.tabs-container .tab', { hasText: /^copilot-ls$/ });
    await tab.hover();
    await tab.locator('.tab-actions .action-label').first().click();
    await page.locator('iframe.webview.ready').waitFor({ state: 'detached' });
    await runCommand(page, 'copilot-ls: Show Last Answer');
    await answerFrame(page).locator('#answer').getByText('Follow-up answer').waitFor();
  });

  step('asks about the selection', async () => {
    await openFile(page, 'src/rate_limit.rs');
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.fill(':36');
    await input.press('Enter');
    await cursorAt(page, 36);
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
    const progress = notification(page, 'Which ports does it listen on?');
    await progress.waitFor();
    await waitUntil('the hanging provider call', () => requests().length === 7 || undefined);
    // Its model call has not answered: the notification says so, not a tool step.
    await progress.getByText('waiting for the model').waitFor();
    await ask('copilot-ls: Ask', 'copilot-ls: Ask', 'What else is there?');
    await answerFrame(page).locator('#answer').getByText('Second answer, while the first still runs.').waitFor({ timeout: 60_000 });
    const status = page.locator('.statusbar-item', { hasText: 'copilot-ls' }).first();
    await status.locator('.codicon-loading').waitFor();
    assert.equal(await status.locator('.codicon-comment-discussion').count(), 0, 'still busy: the first ask runs');
  });

  step('cancels from the progress notification without an error, then goes idle', async () => {
    const progress = notification(page, 'Which ports does it listen on?');
    await progress.waitFor();
    assert.equal(requests().length, 8);
    await progress.locator('.monaco-button', { hasText: 'Cancel' }).click();
    await progress.waitFor({ state: 'hidden' });
    await page.locator('.statusbar-item', { hasText: 'copilot-ls' }).first().locator('.codicon-comment-discussion').waitFor();
  });

  step('stops a question typed into the thread with its Stop button', async () => {
    const question = answerFrame(page).locator('#question');
    await question.fill('Will this be stopped?');
    await question.press('Enter');
    const running = answerFrame(page).locator('.exchange[data-state="running"]', { hasText: 'Will this be stopped?' });
    await running.waitFor();
    await waitUntil('the hanging provider call', () => requests().length === 9 || undefined);
    const stop = answerFrame(page).locator('#stop');
    await stop.click();
    await answerFrame(page).locator('.exchange[data-state="cancelled"]', { hasText: 'Will this be stopped?' }).getByText('Cancelled.').waitFor();
    await stop.waitFor({ state: 'hidden' });
    await page.locator('.statusbar-item', { hasText: 'copilot-ls' }).first().locator('.codicon-comment-discussion').waitFor();
  });

  step('sends a changed setting to the running server', async () => {
    mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'copilot.model': 'fake-2' }));
    await waitUntil('the extension to send the new settings', () => (extensionLog().includes('"model":"fake-2"') ? true : undefined));
  });

  step('shows a provider error with a button to the setting, and nothing for the cancel', async () => {
    await ask('copilot-ls: Ask', 'copilot-ls: Ask', 'Why does this fail?');
    const error = errorNotification(page, /copilot-ls: .*401/);
    await error.waitFor({ timeout: 60_000 });
    // A cancelled ask would have shown its error before this one; -32800 is not an error.
    assert.equal(await errorNotification(page, /./).count(), 1, await page.locator('.notifications-toasts').innerText());
    assert.equal(requests().length, 10, 'a 401 is not retried, the cancelled calls are not repeated');
    assert.equal((requests()[9].body as { model?: string }).model, 'fake-2', 'didChangeConfiguration reached the server');
    await error.locator('.monaco-button', { hasText: 'Open Settings' }).click();
    await page.locator('.settings-editor').waitFor();
    const search = page.locator('.settings-editor .suggest-input-container .view-lines');
    await search.filter({ hasText: 'copilot.apiKeyEnv' }).waitFor();
    await page.locator('.settings-editor .setting-item-label', { hasText: 'Api Key Env' }).first().waitFor();
    // Plain strings: each is a text box in the Settings UI, not "Edit in settings.json".
    const settings: Array<[string, string]> = [
      ['copilot.baseUrl', 'Base Url'],
      ['copilot.model', 'Model'],
      ['copilot.apiKeyEnv', 'Api Key Env'],
      ['copilot.server.path', 'Path'],
      ['copilot.maxOutputTokens', 'Max Output Tokens'],
    ];
    for (const [key, label] of settings) {
      await page.locator('.settings-editor .suggest-input-container').click();
      await page.keyboard.press('Control+A');
      await page.keyboard.type(key);
      await page.locator('.settings-editor').getByText('1 Setting Found').waitFor();
      const item = settingItem(label);
      await item.waitFor();
      await item.locator('input').first().waitFor();
      assert.equal(await item.getByText('Edit in settings.json').filter({ visible: true }).count(), 0, label);
    }
    await closeSettings(page);
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
    // restarts the server when copilot.server.path changes.
    mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'copilot.server.path': path.join(work, 'no-such-copilot-ls') }));
    const error = errorNotification(page, 'copilot.server.path points to');
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

  step('Restart Server reads copilot.server.path again', async () => {
    writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify({ 'copilot.server.path': env.copilotLs }));
    await serverRunning(page).waitFor({ timeout: 60_000 });
    await runCommand(page, 'copilot-ls: Restart Server');
    await notification(page, 'copilot-ls: server restarted.').waitFor();
    await serverRunning(page).waitFor();
    assert.ok(extensionLog().includes(`using copilot-ls at ${env.copilotLs} (from copilot.server.path)`));
  });
});
