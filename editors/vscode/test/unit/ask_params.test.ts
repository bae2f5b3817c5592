import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ASK_PLACEHOLDER, buildAskParams, isEmptyRange } from '../../src/ask_params';

const selection = { start: { line: 25, character: 4 }, end: { line: 33, character: 5 } };
const cursor = { start: { line: 3, character: 2 }, end: { line: 3, character: 2 } };
const fileEditor = { uri: 'file:///w/src/rate_limit.rs', scheme: 'file' };

describe('buildAskParams', () => {
  it('refuses an empty question (the server would answer -32602)', () => {
    assert.equal(buildAskParams({ question: '   ' }), undefined);
  });

  it('trims the question and starts a new conversation', () => {
    const p = buildAskParams({ question: '  Where is refill?  ' });
    assert.equal(p?.question, 'Where is refill?');
    assert.match(p?.conversationId ?? '', /^[0-9a-f-]{36}$/);
    assert.notEqual(buildAskParams({ question: 'q' })?.conversationId, p?.conversationId);
  });

  it('reuses the conversation of a follow-up', () => {
    assert.equal(buildAskParams({ question: 'and then?', conversationId: 'c-7' })?.conversationId, 'c-7');
  });

  it('sends the document and a non-empty selection as range', () => {
    const p = buildAskParams({ question: 'q', editor: { ...fileEditor, selection }, workDoneToken: 't-1' });
    assert.deepEqual(p, {
      question: 'q',
      conversationId: p?.conversationId,
      textDocument: { uri: 'file:///w/src/rate_limit.rs' },
      range: selection,
      workDoneToken: 't-1',
    });
  });

  it('leaves out the range for a bare cursor', () => {
    const p = buildAskParams({ question: 'q', editor: { ...fileEditor, selection: cursor } });
    assert.deepEqual(p?.textDocument, { uri: 'file:///w/src/rate_limit.rs' });
    assert.equal('range' in (p ?? {}), false);
    assert.equal(isEmptyRange(cursor), true);
  });

  it('leaves out documents the server never saw', () => {
    const p = buildAskParams({ question: 'q', editor: { uri: 'untitled:Untitled-1', scheme: 'untitled', selection } });
    assert.equal(p?.textDocument, undefined);
    assert.equal(p?.range, undefined);
  });
});

// Issue #55 item 17: Ask's input box showed the sample workspace's question ("How does the
// rate limiter refill its tokens?") in every project.
describe('the Ask box\'s hint', () => {
  it('is neutral: no question of one project', () => {
    assert.doesNotMatch(ASK_PLACEHOLDER, /rate limiter|tokens|\?$/);
    assert.match(ASK_PLACEHOLDER, /this codebase/);
  });
});
