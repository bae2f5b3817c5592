import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AnswerStore } from '../../src/answer_store';
import { citationEntries } from '../../src/citation_entries';
import { progressText, shortQuestion } from '../../src/progress_report';
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

describe('progressText', () => {
  it('numbers each tool step', () => {
    assert.equal(progressText({ kind: 'report', message: 'search_code: rate_limit' }, 1), 'step 1: search_code: rate_limit');
    assert.equal(progressText({ kind: 'begin', title: 'Copilot' }, 0), undefined);
    assert.equal(progressText({ kind: 'end' }, 3), undefined);
  });

  it('shortens long questions to one line', () => {
    assert.equal(shortQuestion('a\n  b'), 'a b');
    assert.equal(shortQuestion('x'.repeat(100), 10), `${'x'.repeat(9)}…`);
  });
});

describe('AnswerStore', () => {
  it('keeps the conversation of the last answer for follow-ups', () => {
    const store = new AnswerStore();
    const seen: Array<string | undefined> = [];
    store.onDidChange((a) => seen.push(a?.question));
    assert.equal(store.conversationId, undefined);
    store.set('q1', sampleResult({ conversationId: 'c-1' }));
    assert.equal(store.conversationId, 'c-1');
    store.clear();
    assert.equal(store.current, undefined);
    assert.deepEqual(seen, ['q1', undefined]);
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
