// The bridge between `copilot/model` and VS Code's language model API, at the `vscode.lm`
// boundary: ModelParams as the API's messages and parts (through a test double of its
// classes), a test double of `LanguageModelChat` answering with scripted stream parts,
// the reply, the deltas, cancellation, the model chosen and the errors; and what the chat
// participant writes besides its VS Code calls.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerAfterStream, applyLink, conversationOf, editDiffMarkdown } from '../../src/chat_answer';
import {
  chooseModel,
  editorModelNotice,
  JUSTIFICATION,
  ModelCallError,
  modelErrorMessage,
  runModelCall,
  toLmMessages,
} from '../../src/model_mapping';
import { ErrorCode, type ModelDelta, type ModelParams } from '../../src/protocol';
import { sampleResult } from './fixtures';
import { FakeChatModel, LM, readPart, TextPart, ToolCallPart } from './lm_double';

async function* parts(...items: unknown[]): AsyncIterable<unknown> {
  for (const item of items) {
    yield item;
  }
}

const TOOLS = [{ name: 'search_code', description: 'Search the code', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } }];

function params(over: Partial<ModelParams> = {}): ModelParams {
  return {
    conversationId: 'c-1',
    model: 'm-1',
    system: 'You are copilot-ls.',
    messages: [{ role: 'user', text: 'Where is the burst read?' }],
    tools: TOOLS,
    partialResultToken: 'p-1',
    ...over,
  };
}

const NOT_CANCELLED = { isCancellationRequested: false };

describe('ModelParams as the language model API\'s messages', () => {
  it('puts the system prompt first in the first user message', () => {
    assert.deepEqual(toLmMessages(params(), LM), [
      { role: 'user', content: [{ type: 'text', value: 'You are copilot-ls.' }, { type: 'text', value: 'Where is the burst read?' }] },
    ]);
  });

  it('maps tool calls to tool-call parts and tool results to tool-result parts in one user message', () => {
    const messages = toLmMessages(
      params({
        messages: [
          { role: 'user', text: 'Q' },
          {
            role: 'assistant',
            text: 'Let me look.',
            toolCalls: [
              { id: 'call_1', name: 'search_code', arguments: { query: 'burst' } },
              { id: 'call_2', name: 'read_file', arguments: { path: 'src/config.rs' } },
            ],
          },
          { role: 'tool', toolCallId: 'call_1', text: 'src/config.rs:21 fn read' },
          { role: 'tool', toolCallId: 'call_2', text: 'fn read<T>() {}' },
          { role: 'assistant', toolCalls: [{ id: 'call_3', name: 'answer', arguments: { answer: 'A' } }] },
        ],
      }),
      LM,
    );
    assert.deepEqual(messages, [
      { role: 'user', content: [{ type: 'text', value: 'You are copilot-ls.' }, { type: 'text', value: 'Q' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', value: 'Let me look.' },
          { type: 'toolCall', callId: 'call_1', name: 'search_code', input: { query: 'burst' } },
          { type: 'toolCall', callId: 'call_2', name: 'read_file', input: { path: 'src/config.rs' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'toolResult', callId: 'call_1', content: [{ type: 'text', value: 'src/config.rs:21 fn read' }] },
          { type: 'toolResult', callId: 'call_2', content: [{ type: 'text', value: 'fn read<T>() {}' }] },
        ],
      },
      { role: 'assistant', content: [{ type: 'toolCall', callId: 'call_3', name: 'answer', input: { answer: 'A' } }] },
    ]);
  });

  it('gives the system prompt a user message of its own when the conversation opens with the assistant', () => {
    const messages = toLmMessages(params({ messages: [{ role: 'assistant', text: 'Hello' }, { role: 'user', text: 'Q' }] }), LM);
    assert.deepEqual(
      messages.map((m) => [m.role, m.content.map((p) => (p.type === 'text' ? p.value : p.type))]),
      [
        ['user', ['You are copilot-ls.']],
        ['assistant', ['Hello']],
        ['user', ['Q']],
      ],
    );
  });
});

describe('a copilot/model call through a test double of LanguageModelChat', () => {
  it('sends the messages and the tools, streams the text as deltas and replies with the whole turn', async () => {
    const model = new FakeChatModel('m-1', () =>
      parts(new TextPart('The burst '), new TextPart('is read by `read`.'), new ToolCallPart('call_9', 'answer', { answer: 'A', citations: [] }), { unknown: true }),
    );
    const deltas: ModelDelta[] = [];
    const { result, replaced } = await runModelCall(params(), { models: [model], lm: LM, readPart, token: NOT_CANCELLED, sendDelta: (d) => deltas.push(d) });
    assert.equal(replaced, undefined);
    assert.deepEqual(deltas, [{ text: 'The burst ' }, { text: 'is read by `read`.' }]);
    assert.deepEqual(result, {
      model: 'm-1',
      text: 'The burst is read by `read`.',
      toolCalls: [{ id: 'call_9', name: 'answer', arguments: { answer: 'A', citations: [] } }],
      stopReason: 'tool_calls',
    });
    assert.equal(model.sent.length, 1);
    assert.deepEqual(model.sent[0].options, { justification: JUSTIFICATION, tools: TOOLS });
    assert.equal(model.sent[0].messages[0].content[0].type, 'text');
    assert.equal(model.sent[0].token, NOT_CANCELLED, 'the request\'s cancellation token reaches the model');
  });

  it('ends a turn without tool calls with stopReason end', async () => {
    const model = new FakeChatModel('m-1', () => parts(new TextPart('Done.')));
    const { result } = await runModelCall(params(), { models: [model], lm: LM, readPart, token: NOT_CANCELLED, sendDelta: () => undefined });
    assert.equal(result.stopReason, 'end');
    assert.deepEqual(result.toolCalls, []);
  });

  it('uses the first listed model when the id is no longer listed, and says so', async () => {
    const first = new FakeChatModel('m-2', () => parts(new TextPart('ok')));
    const { result, replaced } = await runModelCall(params({ model: 'gone' }), { models: [first], lm: LM, readPart, token: NOT_CANCELLED, sendDelta: () => undefined });
    assert.equal(result.model, 'm-2');
    assert.match(replaced ?? '', /"gone" is no longer listed; using Model m-2 \(test-vendor\)/);
  });

  it('answers -32803 when the editor lists no model', async () => {
    await assert.rejects(
      runModelCall(params(), { models: [] as FakeChatModel[], lm: LM, readPart, token: NOT_CANCELLED, sendDelta: () => undefined }),
      (err: unknown) => err instanceof ModelCallError && err.code === ErrorCode.RequestFailed && /lists no language model/.test(err.message),
    );
  });

  it('answers -32803 naming the model when the user declined consent (LanguageModelError NoPermissions)', async () => {
    const declined = Object.assign(new Error('User did not consent'), { code: 'NoPermissions', name: 'LanguageModelError' });
    const model = new FakeChatModel('m-1', () => declined);
    await assert.rejects(
      runModelCall(params(), { models: [model], lm: LM, readPart, token: NOT_CANCELLED, sendDelta: () => undefined }),
      (err: unknown) =>
        err instanceof ModelCallError && err.code === ErrorCode.RequestFailed && /did not allow copilot-ls to use Model m-1 \(test-vendor\)/.test(err.message),
    );
  });

  it('answers -32803 for a quota (Blocked) and for an error in the middle of the stream', async () => {
    const blocked = Object.assign(new Error('quota exceeded'), { code: 'Blocked' });
    await assert.rejects(
      runModelCall(params(), { models: [new FakeChatModel('m-1', () => blocked)], lm: LM, readPart, token: NOT_CANCELLED, sendDelta: () => undefined }),
      /refused the request .*quota exceeded/,
    );
    async function* broken() {
      yield new TextPart('half');
      throw new Error('connection reset');
    }
    await assert.rejects(
      runModelCall(params(), { models: [new FakeChatModel('m-1', () => broken())], lm: LM, readPart, token: NOT_CANCELLED, sendDelta: () => undefined }),
      (err: unknown) => err instanceof ModelCallError && err.code === ErrorCode.RequestFailed && /Model m-1 \(test-vendor\) failed: connection reset/.test(err.message),
    );
  });

  it('stops reading when the request is cancelled and answers -32800', async () => {
    const token = { isCancellationRequested: false };
    const deltas: ModelDelta[] = [];
    async function* slow() {
      yield new TextPart('first');
      // $/cancelRequest arrives while the model writes.
      token.isCancellationRequested = true;
      yield new TextPart('never read');
    }
    await assert.rejects(
      runModelCall(params(), { models: [new FakeChatModel('m-1', () => slow())], lm: LM, readPart, token, sendDelta: (d) => deltas.push(d) }),
      (err: unknown) => err instanceof ModelCallError && err.code === ErrorCode.RequestCancelled,
    );
    assert.deepEqual(deltas, [{ text: 'first' }]);
  });
});

describe('the model chosen and what the user is told', () => {
  const models = [
    { id: 'a', name: 'A', vendor: 'v' },
    { id: 'b', name: 'B', vendor: 'w' },
  ];
  it('takes the listed id, else the first model', () => {
    assert.deepEqual(chooseModel(models, 'b'), { model: models[1] });
    assert.deepEqual(chooseModel(models, undefined), { model: models[0] });
    assert.deepEqual(chooseModel(models, ''), { model: models[0] });
  });

  it('names the error of an unknown code plainly', () => {
    assert.equal(modelErrorMessage(new Error('boom'), 'A (v)'), 'A (v) failed: boom');
    assert.match(modelErrorMessage(Object.assign(new Error('x'), { code: 'NotFound' }), 'A (v)'), /^A \(v\) is not available: x$/);
  });

  it('says where the question and the code go', () => {
    assert.match(editorModelNotice({ name: 'GPT-4o', vendor: 'copilot' }), /your question and the code copilot-ls reads to answer it go to that model's provider \(copilot\)/);
  });
});

describe('the chat participant\'s answer', () => {
  it('continues the conversation of its latest answer in the chat history', () => {
    const history = [
      { participant: 'copilot-ls.chat', result: { metadata: { conversationId: 'c-old' } } },
      { participant: 'other.chat', result: { metadata: { conversationId: 'c-other' } } },
      { participant: 'copilot-ls.chat', result: { metadata: { conversationId: 'c-new' } } },
      { participant: 'copilot-ls.chat' },
    ];
    assert.equal(conversationOf(history, 'copilot-ls.chat'), 'c-new');
    assert.equal(conversationOf([], 'copilot-ls.chat'), undefined);
  });

  it('writes the reply\'s answer only when it is not what streamed', () => {
    assert.equal(answerAfterStream('The answer.', true, 'The answer.\n'), '');
    assert.equal(answerAfterStream('', false, 'The answer.'), 'The answer.\n');
    assert.equal(answerAfterStream('Let me look.', true, 'The answer.'), '\n\n---\n\nThe answer.\n');
  });

  it('shows a suggested edit as a fenced diff', () => {
    const base = sampleResult();
    const result = sampleResult({
      steps: [...base.steps, { tool: 'propose_edit', arguments: { path: 'src/rate_limit.rs', title: 'Document refill', old_text: 'a\n', new_text: 'b\n' }, ok: true, summary: '' }],
    });
    const diff = editDiffMarkdown(result.edits[0], result);
    assert.match(diff, /^```diff\n/);
    assert.match(diff, /\n\+/);
  });

  it('applies a suggested edit through a command link carrying the edit', () => {
    const edit = sampleResult().edits[0];
    const link = applyLink({ ...edit, title: 'Fix [this]' });
    const m = /^\[\*\*Apply…\*\* Fix \\\[this\\\]\]\(command:copilot-ls\.applySuggestedEdit\?([^ ]+) "[^"]+"\)$/.exec(link);
    assert.ok(m, link);
    assert.deepEqual(JSON.parse(decodeURIComponent(m[1])), [{ ...edit, title: 'Fix [this]' }]);
  });
});
