import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Step } from '../../src/protocol';
import { Thread, turnsFromSteps, turnViews } from '../../src/thread';
import { renderExchange } from '../../src/thread_render';
import { sampleResult } from './fixtures';

const search: Step = { tool: 'search_code', arguments: { pattern: 'refill' }, ok: true, summary: '2 matches', thought: 'Let me look for refill.' };
const read: Step = { tool: 'read_file', arguments: { path: 'src/rate_limit.rs', start_line: 1, end_line: 40 }, ok: true, summary: '40 lines' };

describe('Thread deltas', () => {
  it('appends text to its turn as it streams and shows it open', () => {
    const thread = new Thread('c');
    const ex = thread.start('How?');
    thread.applyDelta(ex, { turn: 1, text: 'Tokens are ' });
    thread.applyDelta(ex, { turn: 1, text: 'refilled lazily.' });
    assert.equal(ex.turns[0].text, 'Tokens are refilled lazily.');
    assert.deepEqual(turnViews(ex).map((v) => v.kind), ['streaming']);
    assert.equal(ex.phase.kind, 'writing');
    const html = renderExchange(ex, { editsApplicable: false });
    assert.ok(html.includes('<div class="md streaming"><p>Tokens are refilled lazily.</p>'), html);
    assert.ok(html.includes('the model is writing'), html);
  });

  it('collapses a turn into reasoning once its tool calls arrive, then waits for the model', () => {
    const thread = new Thread('c');
    const ex = thread.start('How?');
    thread.applyDelta(ex, { turn: 1, text: 'Let me look for refill.' });
    thread.applyDelta(ex, { turn: 1, step: search });
    assert.deepEqual(turnViews(ex).map((v) => v.kind), ['reasoning']);
    assert.equal(ex.phase.kind, 'waiting');
    const html = renderExchange(ex, { editsApplicable: false });
    assert.match(html, /<details class="reasoning" data-key="1-1"><summary>Reasoning: Let me look for refill\.<\/summary>/);
    assert.doesNotMatch(html, /<details[^>]* open/, 'collapsed');
    assert.ok(html.includes('<code>search_code</code> refill — 2 matches'), html);
    assert.ok(html.includes('waiting for the model'), html);
  });

  it('keeps turns in order even when a later turn arrives first, and ignores bad turns', () => {
    const thread = new Thread('c');
    const ex = thread.start('q');
    thread.applyDelta(ex, { turn: 2, text: 'b' });
    thread.applyDelta(ex, { turn: 1, text: 'a' });
    thread.applyDelta(ex, { turn: 0, text: 'x' });
    thread.applyDelta(ex, { turn: 1.5, text: 'x' });
    assert.deepEqual(ex.turns.map((t) => [t.turn, t.text]), [[1, 'a'], [2, 'b']]);
  });

  it('replaces the streamed answer with the reply and keeps the reasoning', () => {
    const thread = new Thread('c');
    const ex = thread.start('How?');
    thread.applyDelta(ex, { turn: 1, text: 'Let me look.' });
    thread.applyDelta(ex, { turn: 1, step: search });
    thread.applyDelta(ex, { turn: 2, text: 'A streamed draft of the answer' });
    thread.complete(ex, sampleResult({ answer: 'The final answer.', conversationId: 'c-2' }));
    assert.equal(ex.state, 'answered');
    assert.equal(thread.conversationId, 'c-2');
    assert.deepEqual(turnViews(ex).map((v) => v.kind), ['reasoning']);
    const html = renderExchange(ex, { editsApplicable: true });
    assert.ok(html.includes('The final answer.'));
    assert.ok(!html.includes('A streamed draft'), 'the reply is authoritative');
    assert.ok(!html.includes('class="phase"'), 'no phase line once answered');
  });

  it('rebuilds turns from the steps when the server did not stream', () => {
    const turns = turnsFromSteps([search, read, { ...read, thought: 'Now the config.' }]);
    assert.deepEqual(turns.map((t) => [t.text, t.steps.length]), [['Let me look for refill.', 2], ['Now the config.', 1]]);
    const thread = new Thread('c');
    const ex = thread.start('q');
    thread.complete(ex, sampleResult({ steps: [search, read] }));
    assert.equal(ex.streamed, false);
    assert.deepEqual(turnViews(ex).map((v) => v.kind), ['reasoning']);
  });

  it('keeps earlier exchanges in the thread for follow-ups and ignores deltas after the end', () => {
    const thread = new Thread('c');
    const first = thread.start('one');
    thread.complete(first, sampleResult({ conversationId: 'c' }));
    const second = thread.start('two');
    assert.equal(thread.running, true);
    assert.equal(thread.lastAnswered, first);
    thread.fail(second, 'copilot-ls: provider returned 401');
    thread.applyDelta(second, { turn: 1, text: 'late' });
    assert.equal(second.turns.length, 0);
    assert.equal(thread.running, false);
    assert.deepEqual(thread.exchanges.map((e) => e.question), ['one', 'two']);
    // In the thread, without the prefix the notification needs; with the fix's buttons.
    thread.fail(second, 'copilot-ls: provider returned 401', [{ label: 'Open Settings', command: 'workbench.action.openSettings', args: ['copilot-ls.apiKeyEnv'] }]);
    const html = renderExchange(second, { editsApplicable: false });
    assert.ok(html.includes('<div class="error"><p>provider returned 401</p>'), html);
    assert.ok(html.includes('<button class="error-action" type="button" data-action="0">Open Settings</button>'), html);
  });

  it('counts tool steps from the work-done reports', () => {
    const thread = new Thread('c');
    const ex = thread.start('q');
    thread.applyWork(ex, { kind: 'work', value: { kind: 'begin', title: 'Copilot', message: 'Thinking' } });
    thread.applyWork(ex, { kind: 'work', value: { kind: 'report', message: 'search_code: refill' } });
    thread.applyWork(ex, { kind: 'work', value: { kind: 'report', message: 'read_file: src/a.rs:1-9' } });
    assert.deepEqual(ex.phase, { kind: 'tool', step: 2, message: 'read_file: src/a.rs:1-9' });
  });
});
