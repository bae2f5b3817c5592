// The bridge against the real server, without VS Code: a client that declares
// `copilotEditorModels`, lists one model and answers `copilot/model` with the extension's
// own runModelCall over a test double of LanguageModelChat (test/unit/lm_double.ts), as
// model_bridge.ts does over `vscode.lm`. With no provider and no key the server asks
// through it (PROTOCOL.md section 11): the model's tool calls run, its answer cites, its
// text streams; a declined consent gives the no-model answer; cancelling the ask cancels
// the model call.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import {
  CancellationTokenSource,
  createProtocolConnection,
  ProgressType,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type CancellationToken,
  type ProtocolConnection,
} from 'vscode-languageserver-protocol/node';
import { ModelCallError, runModelCall } from '../../src/model_mapping';
import { ErrorCode, type AskDelta, type AskResult, type ModelDelta, type ModelParams, type ModelResult } from '../../src/protocol';
import { cleanEnv, waitUntil } from '../e2e/harness';
import { FakeChatModel, LM, readPart, TextPart, ToolCallPart, type Message } from '../unit/lm_double';

const MODEL_DELTA = new ProgressType<ModelDelta>();
const READ_OLD = '    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)\n';
const READ_NEW = '    // A malformed value falls back to the default.\n' + READ_OLD;

/** The turn of the conversation: assistant messages so far. */
function turnOf(messages: Message[]): number {
  return messages.filter((m) => m.role === 'assistant').length;
}

let consent = true;
let hang = false;
const modelCalls: ModelParams[] = [];
const cancelledCalls: string[] = [];

async function* scripted(messages: Message[], token: { isCancellationRequested: boolean }): AsyncIterable<unknown> {
  if (hang) {
    // A slow model: it writes nothing until the request is cancelled ($/cancelRequest).
    const cancellable = token as CancellationToken;
    if (!cancellable.isCancellationRequested) {
      await new Promise<void>((resolve) => cancellable.onCancellationRequested(() => resolve()));
    }
    return;
  }
  if (turnOf(messages) === 0) {
    yield new TextPart('Reading how the burst is parsed. ');
    yield new ToolCallPart('b1', 'propose_edit', { path: 'src/config.rs', old_text: READ_OLD, new_text: READ_NEW, title: 'Say why' });
  } else {
    yield new TextPart('Found it.');
    yield new ToolCallPart('b2', 'answer', {
      answer: 'The burst is read by `read` (src/config.rs:21).',
      citations: [{ path: 'src/config.rs', line: 21, end_line: 23, note: 'read' }],
    });
  }
}

const model = new FakeChatModel('test-model', (token, messages) =>
  consent ? scripted(messages, token) : Object.assign(new Error('The user did not consent'), { code: 'NoPermissions' }),
);

let conn: ProtocolConnection;
let child: ChildProcess;
let work: string;
const deltas: Array<{ token: unknown; value: unknown }> = [];

describe('the editor\'s model through the real server (copilot/model)', { timeout: 120_000 }, () => {
  before(async () => {
    const bin = process.env.COPILOT_LS_BIN;
    const fixture = process.env.FIXTURE_WORKSPACE;
    assert.ok(bin && fixture, 'COPILOT_LS_BIN and FIXTURE_WORKSPACE must be set (run test/run.sh)');
    work = mkdtempSync(path.join(os.tmpdir(), 'copilot-vscode-editor-model-'));
    const root = path.join(work, 'tollbooth');
    cpSync(fixture, root, { recursive: true });
    // No provider, no key: the server is to default to the editor's model.
    child = spawn(bin, [], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'], env: cleanEnv({ XDG_CACHE_HOME: path.join(work, 'cache') }) });
    conn = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    conn.onNotification('$/progress', (p: { token: unknown; value: unknown }) => {
      deltas.push(p);
    });
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => null));
    conn.onRequest('client/registerCapability', () => null);
    conn.onNotification('window/showMessage', () => undefined);
    conn.onNotification('window/logMessage', () => undefined);
    conn.onNotification('textDocument/publishDiagnostics', () => undefined);
    // What model_bridge.ts does, with the test double in place of vscode.lm.
    conn.onRequest('copilot/model', async (params: ModelParams, token: CancellationToken): Promise<ModelResult> => {
      modelCalls.push(params);
      token.onCancellationRequested(() => cancelledCalls.push(params.conversationId));
      try {
        const { result } = await runModelCall(params, {
          models: [model],
          lm: LM,
          readPart,
          token,
          sendDelta: (d) => void conn.sendProgress(MODEL_DELTA, params.partialResultToken, d),
        });
        return result;
      } catch (err) {
        if (err instanceof ModelCallError) {
          throw new ResponseError(err.code, err.message);
        }
        throw err;
      }
    });
    conn.listen();
    await conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri: pathToFileURL(root).toString(),
      workspaceFolders: [{ uri: pathToFileURL(root).toString(), name: 'tollbooth' }],
      capabilities: {
        general: { positionEncodings: ['utf-16'] },
        window: { workDoneProgress: true },
        workspace: { workspaceEdit: { documentChanges: true }, configuration: true },
        textDocument: { publishDiagnostics: { dataSupport: true }, codeAction: { dataSupport: true } },
        experimental: { copilotEditorModels: true },
      },
      initializationOptions: {
        editorModels: [{ id: model.id, name: model.name, vendor: model.vendor, family: model.family, maxInputTokens: model.maxInputTokens }],
      },
    });
    await conn.sendNotification('initialized', {});
  });

  after(async () => {
    try {
      await conn?.sendRequest('shutdown');
      await conn?.sendNotification('exit');
    } catch {
      // Already gone; kill below.
    }
    child?.kill('SIGKILL');
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('asks through the editor\'s model with no provider and no key: its tool calls run, its answer cites', async () => {
    const result = (await conn.sendRequest('copilot/ask', {
      question: 'Where is the burst read?',
      conversationId: 'conv-editor',
      partialResultToken: 'ask-editor',
    })) as AskResult;
    assert.equal(result.stopReason, 'answered', JSON.stringify(result));
    assert.match(result.answer, /read by `read`/);
    assert.deepEqual(
      result.citations.map((c) => [c.path, c.line, c.verified]),
      [['src/config.rs', 21, true]],
    );
    assert.deepEqual(result.edits.map((e) => e.title), ['Say why']);
    const mine = modelCalls.filter((c) => c.conversationId === 'conv-editor');
    assert.equal(mine.length, 2);
    assert.equal(mine[0].model, model.id);
    assert.ok(mine[0].tools.some((t) => t.name === 'answer'));
    // The double got the system prompt first in the first user message.
    assert.equal(model.sent[0].messages[0].role, 'user');
    assert.equal(model.sent[0].messages[0].content[0].type, 'text');
    assert.ok(model.sent[0].messages[0].content.length >= 2);
    // The model's text reached the ask's own partialResultToken.
    const streamed = deltas.filter((d) => d.token === 'ask-editor').map((d) => (d.value as AskDelta).text ?? '').join('');
    assert.match(streamed, /Reading how the burst is parsed/);
  });

  it('gives the no-model answer, saying why, when the user declines consent', async () => {
    consent = false;
    try {
      const result = (await conn.sendRequest('copilot/ask', { question: 'Where is the burst read?', conversationId: 'conv-declined' })) as AskResult;
      assert.equal(result.stopReason, 'no_provider', JSON.stringify(result));
      assert.match(result.answer.split('\n')[0], /consent|allow|declin/i, result.answer);
    } finally {
      consent = true;
    }
  });

  it('cancels the model call when the ask is cancelled', async () => {
    hang = true;
    try {
      const source = new CancellationTokenSource();
      const asked = conn.sendRequest('copilot/ask', { question: 'Where is the burst read?', conversationId: 'conv-cancel' }, source.token);
      await waitUntil('the model call', () => modelCalls.some((c) => c.conversationId === 'conv-cancel') || undefined);
      source.cancel();
      await assert.rejects(asked, (err: { code?: number }) => err.code === ErrorCode.RequestCancelled);
      await waitUntil('$/cancelRequest for the model call', () => cancelledCalls.includes('conv-cancel') || undefined);
    } finally {
      hang = false;
    }
  });
});
