// The small pure modules: citation entries and messages, ask phases, the answer store,
// the server's log levels.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AnswerStore } from '../../src/answer_store';
import { citationEntries } from '../../src/citation_entries';
import { AskedQuestions, citedLineText, notelessCitationMessage, questionExcerpt } from '../../src/citation_message';
import { nextPhase, phaseText, WAITING } from '../../src/ask_phase';
import { shortQuestion } from '../../src/progress_report';
import { serverLogLevel } from '../../src/server_log';
import { ROOT, sampleResult } from './fixtures';



describe('citationEntries', () => {
  it('lists citations then edits, unverified ones without a location', () => {
    const entries = citationEntries(sampleResult());
    assert.deepEqual(
      entries.map((e) => [e.kind, e.label, e.description, e.location?.line]),
      [
        ['citation', 'src/rate_limit.rs:26-34', 'refill', 26],
        ['citation', 'src/missing.rs:1', '(not found in the workspace)', undefined],
        ['edit', 'Document refill', 'suggested edit in src/rate_limit.rs:35', 35],
      ],
    );
    assert.equal(entries[0].location?.uri, `${ROOT}/src/rate_limit.rs`);
  });
});

describe('ask phases', () => {
  it('numbers each tool step, and keeps its own words over the server\'s begin message', () => {
    const tool = nextPhase(WAITING, { kind: 'work', value: { kind: 'report', message: 'search_code: rate_limit' } }, 1);
    assert.equal(phaseText(tool), 'step 1: search_code: rate_limit');
    assert.equal(phaseText(nextPhase(WAITING, { kind: 'work', value: { kind: 'begin', title: 'Copilot', message: 'Thinking' } }, 0)), 'waiting for the model');
    assert.equal(nextPhase(tool, { kind: 'work', value: { kind: 'end' } }, 3), tool);
  });

  it('says it waits for the model once a step finished, not the last tool', () => {
    const tool = nextPhase(WAITING, { kind: 'work', value: { kind: 'report', message: 'read_file: src/a.rs' } }, 1);
    const step = { tool: 'read_file', arguments: {}, ok: true, summary: '' };
    assert.equal(phaseText(nextPhase(tool, { kind: 'delta', delta: { turn: 1, step } }, 1)), 'waiting for the model');
    assert.equal(phaseText(nextPhase(WAITING, { kind: 'delta', delta: { turn: 2, text: 'The' } }, 1)), 'the model is writing');
  });

  it('shortens long questions to one line', () => {
    assert.equal(shortQuestion('a\n  b'), 'a b');
    assert.equal(shortQuestion('x'.repeat(100), 10), `${'x'.repeat(9)}…`);
  });
});

describe('the message of a citation without a note', () => {
  it('names the question by its first line, shortened', () => {
    assert.equal(questionExcerpt('How does refill work?'), 'How does refill work?');
    assert.equal(questionExcerpt('\n  Where is the burst read?  \nAnswer in detail.\n'), 'Where is the burst read? …');
    assert.equal(questionExcerpt(`${'word '.repeat(30)}\nmore`, 20), 'word word word word…');
    assert.equal(notelessCitationMessage('Why?\nAnd how?'), 'Cited in the answer to: Why? …');
  });

  it('replaces only a question that was asked, never a note', () => {
    const asked = new AskedQuestions();
    const question = 'Where is the burst read?\nAnswer with the lines that parse it.';
    assert.equal(asked.citationMessage(question), question, 'not asked (yet): a note that reads like one');
    asked.add(question);
    assert.equal(asked.citationMessage(question), 'Cited in the answer to: Where is the burst read? …');
    assert.equal(asked.citationMessage('refill before taking a token'), 'refill before taking a token');
    for (let i = 0; i < 30; i++) asked.add(`question ${i}`);
    assert.equal(asked.citationMessage(question), question, 'only the latest questions are kept');
  });

  // Issue #55 item 5: five rows that all read "Cited in the answer to: …" said nothing of
  // what is at each line.
  it('leads with the citation\'s number and what is at its lines, so the rows differ', () => {
    const asked = new AskedQuestions();
    const question = 'where are redirects resolved?';
    asked.add(question);
    const file = [
      '#[derive(Debug)]',
      '/// Reads a variable.',
      'pub(crate) fn read<T: std::str::FromStr>(name: &str, default: T) -> T {',
      '    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)',
      '}',
      '',
      '    let x = resolve(redirect_url_that_is_long_enough_to_be_cut_somewhere_past_the_limit);',
    ];
    const first = asked.citationMessage(question, () => ({ index: 0, text: citedLineText(file, 0, 4) }));
    const second = asked.citationMessage(question, () => ({ index: 1, text: citedLineText(file, 5, 6) }));
    assert.match(first, /^\(1\) pub\(crate\) fn read<T: std::str::FromStr>\(name: &str, default: T\) -> T — Cited in the answer to: where are redirects resolved\?$/);
    assert.match(second, /^\(2\) let x = resolve\(redirect_url_that_is_long_enough_to_be_cut_somewhere_past_the_l… — Cited in the answer to:/);
    assert.notEqual(first, second);
    // The definition wins over the attribute and the comment; blank lines give nothing.
    assert.equal(citedLineText(['', '  ', '// only a comment'], 0, 2), undefined);
    assert.equal(citedLineText(['@app.route("/")', 'def index():', '    return 1'], 0, 2), 'def index():');
    // A note is shown as it is.
    assert.equal(asked.citationMessage('refill', () => ({ index: 0, text: 'x' })), 'refill');
  });
});

describe('AnswerStore', () => {
  it('keeps the conversation of the last answer for follow-ups', () => {
    const store = new AnswerStore();
    const seen: Array<string | undefined> = [];
    store.onDidChange((c) => seen.push(c.exchange ? `exchange ${c.exchange.id}` : 'all'));
    const first = store.conversationId;
    assert.ok(first, 'a new thread has a conversation id to send');
    const thread = store.thread;
    const exchange = thread.start('q1');
    store.changed(exchange, 5);
    store.complete(thread, exchange, sampleResult({ conversationId: 'c-1' }));
    assert.equal(store.conversationId, 'c-1');
    assert.equal(store.current?.question, 'q1');
    assert.ok(store.positions, 'the last answer is followed');
    store.clear();
    assert.equal(store.current, undefined);
    assert.notEqual(store.conversationId, 'c-1');
    assert.deepEqual(seen, ['exchange 1', 'all', 'all']);
  });

  it('ignores exchanges of a thread that was replaced', () => {
    const store = new AnswerStore();
    const old = store.thread;
    const running = old.start('slow');
    store.newThread();
    const seen: unknown[] = [];
    store.onDidChange((c) => seen.push(c));
    store.changed(running);
    store.complete(old, running, sampleResult());
    assert.deepEqual(seen, []);
    assert.equal(running.state, 'answered', 'it is still settled');
    assert.equal(store.current, undefined);
  });
});

describe('serverLogLevel', () => {
  it('reads the level of tracing lines', () => {
    assert.equal(serverLogLevel('2026-11-30T00:06:06.909449Z  INFO copilot_ls::agent: ask finished'), 'info');
    assert.equal(serverLogLevel('2026-11-30T00:07:01.525951Z  WARN copilot_ls::lsp: ask failed'), 'warn');
    assert.equal(serverLogLevel('2026-11-30T00:07:01.525951Z ERROR copilot_ls: boom'), 'error');
    assert.equal(serverLogLevel('DEBUG something'), 'debug');
    assert.equal(serverLogLevel("thread 'main' panicked at src/main.rs:3:5"), 'error');
  });
});
