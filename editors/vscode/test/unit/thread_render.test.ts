// Rendering: tool call lines, highlighted code, suggested edits and their diffs, usage,
// and the answer view's page.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerPage } from '../../src/answer_page';
import { AskActivity } from '../../src/ask_activity';
import { diffLines, isApplied, proposedTexts } from '../../src/edit_diff';
import { highlightCode } from '../../src/highlight';
import type { Step } from '../../src/protocol';
import { Thread } from '../../src/thread';
import { renderExchange, stepLine, stepText } from '../../src/thread_render';
import { ROOT, sampleResult } from './fixtures';

const RL = `${ROOT}/src/rate_limit.rs`;
const propose: Step = {
  tool: 'propose_edit',
  arguments: { path: 'src/rate_limit.rs', title: 'Document refill', old_text: '    fn refill(&mut self) {\n', new_text: '    /// Adds tokens.\n    fn refill(&mut self) {\n' },
  ok: true,
  summary: 'edit recorded',
};

function answered(overrides = {}) {
  const thread = new Thread('c');
  const ex = thread.start('q');
  thread.complete(ex, sampleResult(overrides));
  return ex;
}

describe('code blocks', () => {
  it('are highlighted and get a copy button', () => {
    const html = renderExchange(answered({ answer: '```rust\nfn main() { let x = 1; }\n```' }), { editsApplicable: false });
    assert.ok(html.includes('<div class="code-block"><button class="copy" type="button"'), html);
    assert.match(html, /<span class="hljs-keyword">fn<\/span> <span class="hljs-title function_">main<\/span>/);
  });

  it('stay plain text in a language it does not know, and never run HTML', () => {
    assert.equal(highlightCode('x', 'brainfuck'), undefined);
    assert.equal(highlightCode('x', ''), undefined);
    const html = renderExchange(answered({ answer: '```weird\n<script>alert(1)</script>\n```' }), { editsApplicable: false });
    assert.ok(html.includes('&lt;script&gt;'), html);
    assert.doesNotMatch(html, /<script>/);
    assert.ok(highlightCode('a = 1', 'toml')?.includes('hljs-'), 'toml via ini');
  });
});

describe('tool call lines', () => {
  it('do not repeat the argument the summary restates', () => {
    const read: Step = { tool: 'read_file', arguments: { path: 'src/a.py', start_line: 186, end_line: 230 }, ok: true, summary: 'src/a.py:186-230' };
    const find: Step = { tool: 'find_symbol', arguments: { name: 'X' }, ok: true, summary: 'X: 1 definition' };
    const search: Step = { tool: 'search_code', arguments: { pattern: 'X' }, ok: true, summary: '5 matches in 1 files' };
    assert.ok(!stepLine(read).includes('—'), stepLine(read));
    assert.ok(stepLine(find).endsWith('X — 1 definition</li>'), stepLine(find));
    assert.ok(stepLine(search).endsWith('X — 5 matches in 1 files</li>'), stepLine(search));
  });

  // Issue #55 item 6: the server's summary of propose_edit (tools/propose_edit.rs) names
  // the path with its lines; the line read "propose_edit utils.py — edit utils.py:1124-1124".
  it('name propose_edit\'s path once, with the lines its summary gives', () => {
    const path = 'requests/src/requests/utils.py';
    const edit: Step = { tool: 'propose_edit', arguments: { path, old_text: 'a', new_text: 'b', title: 'T' }, ok: true, summary: `edit ${path}:1124-1124` };
    const line = stepLine(edit);
    assert.equal(line.split(path).length - 1, 1, line);
    assert.ok(line.endsWith(`<code>propose_edit</code> — edit ${path}:1124-1124</li>`), line);
    assert.equal(stepText(edit), `✓ propose_edit — edit ${path}:1124-1124`);
    // A search pattern the summary happens to contain is still named.
    const search: Step = { tool: 'search_code', arguments: { pattern: 'in' }, ok: true, summary: '5 matches in 1 files' };
    assert.equal(stepText(search), '✓ search_code in — 5 matches in 1 files');
  });
});

describe('suggested edits in the thread', () => {
  it('show the change as a diff with an Apply button', () => {
    const html = renderExchange(answered({ steps: [propose] }), { editsApplicable: true });
    assert.ok(html.includes('<button class="apply" type="button" data-edit="edit-1"'), html);
    assert.ok(html.includes('<span class="added">+    /// Adds tokens.</span>'), html);
    assert.ok(html.includes('<span class="context">     fn refill(&amp;mut self) {</span>'), html);
  });

  it('offer no Apply for an earlier answer or an edit already gone', () => {
    assert.ok(!renderExchange(answered({ steps: [propose] }), { editsApplicable: false }).includes('class="apply"'));
    const gone = renderExchange(answered({ steps: [propose] }), {
      editsApplicable: true,
      placements: { citation: () => undefined, edit: () => ({ kind: 'gone', location: { uri: RL, line: 35, endLine: 35 } }) },
    });
    assert.ok(!gone.includes('class="apply"'));
    assert.ok(gone.includes('no longer applies: its text has changed since'), gone);
  });

  it('say "applied" for an edit its document shows applied, in the latest answer or an earlier one', () => {
    const seen: string[] = [];
    const isApplied = (_edit: unknown, texts: { oldText: string; newText: string }) => {
      seen.push(texts.newText);
      return true;
    };
    for (const editsApplicable of [true, false]) {
      const html = renderExchange(answered({ steps: [propose] }), { editsApplicable, isApplied });
      assert.ok(html.includes('<span class="edit-note applied">applied</span>'), html);
      assert.ok(!html.includes('class="apply"'));
      assert.ok(!html.includes('only the latest'));
    }
    assert.deepEqual(seen, [propose.arguments.new_text, propose.arguments.new_text]);
  });

  it('judge an edit applied by the server\'s rule', () => {
    const oldText = '    fn refill(&mut self) {\n';
    const newText = '    /// Adds tokens.\n    fn refill(&mut self) {\n';
    assert.equal(isApplied(`impl B {\n${oldText}}\n`, oldText, newText), false);
    assert.equal(isApplied(`impl B {\n${newText}}\n`, oldText, newText), true);
    assert.equal(isApplied('a = 20\n', 'a = 10', 'a = 20'), true);
    assert.equal(isApplied('a = 10\n', 'a = 10', 'a = 20'), false);
    assert.equal(isApplied('a = 30\n', 'a = 10', 'a = 20'), false);
  });

  it('read old and new text from the step that proposed them', () => {
    const r = sampleResult({ steps: [{ ...propose, ok: false }, propose] });
    assert.deepEqual(proposedTexts(r.edits[0], r.edits, r.steps), { oldText: propose.arguments.old_text, newText: propose.arguments.new_text });
    assert.equal(proposedTexts(r.edits[0], r.edits, []), undefined);
  });

  it('diff with context and hunks', () => {
    const old = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
    const changed = old.replace('line 2', 'line two').replace('line 17', 'line seventeen');
    const lines = diffLines(old, changed);
    assert.equal(lines.filter((l) => l.kind === 'hunk').length, 2);
    assert.deepEqual(lines.filter((l) => l.kind !== 'context' && l.kind !== 'hunk').map((l) => `${l.kind} ${l.text}`), [
      'removed line 2',
      'added line two',
      'removed line 17',
      'added line seventeen',
    ]);
  });
});

describe('usage and page', () => {
  it('shows the usage the server counted', () => {
    const html = renderExchange(answered({ usage: { modelCalls: 3, inputTokens: 12345, outputTokens: 210, cachedInputTokens: 8000 } }), { editsApplicable: false });
    assert.ok(html.includes('3 model calls · 12,345 input tokens (8,000 cached) · 210 output tokens'), html);
  });

  it('says which model answered, and once where the question went', () => {
    const exchange = answered({ usage: { modelCalls: 2, inputTokens: 10, outputTokens: 5, cachedInputTokens: 0 } });
    exchange.answeredBy = { model: 'GPT-4o (copilot)', notice: "… go to that model's provider (copilot)." };
    const html = renderExchange(exchange, { editsApplicable: false });
    assert.ok(html.includes('<p class="usage">2 model calls · 10 input tokens · 5 output tokens · answered by GPT-4o (copilot)</p>'), html);
    assert.ok(html.includes('<p class="model-notice">… go to that model&#39;s provider (copilot).</p>'), html);
    const later = answered();
    later.answeredBy = { model: 'GPT-4o (copilot)' };
    const plain = renderExchange(later, { editsApplicable: false });
    assert.ok(plain.includes('<p class="usage">Answered by GPT-4o (copilot)</p>'), plain);
    assert.ok(!plain.includes('model-notice'), plain);
  });

  it('has the input box at the bottom and a script only with its nonce', () => {
    const page = answerPage({ nonce: 'abc', cspSource: 'vscode-resource:', sections: [], running: true });
    assert.match(page, /<footer id="composer">[\s\S]*<textarea id="question"/);
    // While a question runs, Stop is the primary button and Ask is disabled; then Ask again.
    assert.match(page, /<button id="send" type="button" disabled>/);
    assert.match(page, /<button id="stop" type="button" class="primary">/);
    const idle = answerPage({ nonce: 'abc', cspSource: 'vscode-resource:', sections: [], running: false });
    assert.match(idle, /<button id="send" type="button" class="primary">/);
    assert.match(idle, /<button id="stop" type="button" hidden>/);
    assert.equal(page.match(/<script/g)?.length, 1);
    assert.ok(page.includes('<script nonce="abc">'));
    assert.ok(page.includes("script-src 'nonce-abc'"));
    assert.match(page, /#answer a \{[^}]*text-decoration: underline/);
    // Diffs wrap rather than scroll sideways (the end-to-end test measures it).
    assert.match(page, /pre\.diff \{[^}]*white-space: pre-wrap/);
    // Long links (a deep path's citation) break rather than widen the page (issue #55 item 4).
    assert.match(page, /#answer \{ overflow-wrap: anywhere; \}/);
  });
});

describe('AskActivity', () => {
  it('stays busy until the last running ask ends', () => {
    let changes = 0;
    const activity = new AskActivity(() => changes++);
    const hanging = activity.begin('slow one');
    const quick = activity.begin('quick one');
    quick.update({ kind: 'tool', step: 1, message: 'search_code: x' });
    assert.deepEqual(activity.describe(), ['"slow one": waiting for the model', '"quick one": step 1: search_code: x']);
    quick.end();
    quick.end();
    assert.equal(activity.count, 1, 'the finished ask does not end the other');
    hanging.update({ kind: 'writing' });
    hanging.update({ kind: 'writing' });
    hanging.end();
    assert.equal(activity.count, 0);
    assert.equal(changes, 6, 'the same wording twice is one change');
  });
});
