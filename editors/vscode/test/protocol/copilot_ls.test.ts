// Drives the real copilot-ls over stdio the way vscode-languageclient does, against the
// scripted fake provider: the wire behaviour the extension relies on, without VS Code.
// When the end-to-end test fails, this one says whether the server or the client is at
// fault.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import {
  CancellationTokenSource,
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';
import { LivePositions } from '../../src/live_positions';
import type { AskDelta, AskResult } from '../../src/protocol';
import { Thread, turnViews } from '../../src/thread';
import { buildAskParams } from '../../src/ask_params';
import { describeAskError } from '../../src/errors';
import { doctorChecks, extensionChecks } from '../../src/setup_report';
import { cleanEnv, startFakeProvider, stopAll, waitUntil } from '../e2e/harness';

const OLD_TEXT = '    fn refill(&mut self) {\n';
const NEW_TEXT = '    /// Adds the tokens earned since the last refill.\n    fn refill(&mut self) {\n';

const SCRIPT = {
  steps: [
    { tool_calls: [{ id: 'c1', name: 'search_code', arguments: { pattern: 'TokenBucket' } }] },
    {
      tool_calls: [
        { id: 'c2', name: 'read_file', arguments: { path: 'src/rate_limit.rs', start_line: 1, end_line: 40 } },
        { id: 'c3', name: 'propose_edit', arguments: { path: 'src/rate_limit.rs', old_text: OLD_TEXT, new_text: NEW_TEXT, title: 'Document refill' } },
      ],
    },
    {
      tool_calls: [
        {
          id: 'c4',
          name: 'answer',
          arguments: {
            answer: 'Refilled in `refill`, see src/rate_limit.rs:26.',
            citations: [{ path: 'src/rate_limit.rs', line: 26, end_line: 34, note: 'refill' }],
          },
        },
      ],
    },
    { hang: true },
    { status: 401, body: '{"error":{"message":"bad key"}}' },
  ],
};

/** A citation diagnostic's `data` (its index in the AskResult and its 1-based lines now). */
function citationData(data: unknown): { index: number; line: number; endLine: number } | undefined {
  const d = data as { citation?: unknown; line?: unknown; endLine?: unknown } | undefined;
  return typeof d?.citation === 'number' && typeof d.line === 'number' && typeof d.endLine === 'number'
    ? { index: d.citation, line: d.line, endLine: d.endLine }
    : undefined;
}

interface InitializeResult {
  capabilities: { executeCommandProvider?: { commands: string[] }; codeActionProvider?: unknown };
  serverInfo?: { name: string; version?: string };
}

let conn: ProtocolConnection;
let init: InitializeResult;
let child: ChildProcess;
let work: string;
let root: string;
let rateLimitUri: string;
let record: string;
const diagnostics = new Map<string, PublishDiagnosticsParams>();
const progress: Array<{ token: unknown; value: { kind: string; title?: string; message?: string } }> = [];

describe('copilot-ls over stdio, as the extension uses it', { timeout: 120_000 }, () => {
  before(async () => {
    const bin = process.env.COPILOT_LS_BIN;
    const fake = process.env.FAKE_PROVIDER_BIN;
    const fixture = process.env.FIXTURE_WORKSPACE;
    assert.ok(bin && fake && fixture, 'COPILOT_LS_BIN, FAKE_PROVIDER_BIN and FIXTURE_WORKSPACE must be set (run test/run.sh)');
    const outDir = process.env.TEST_OUTPUT_DIR ?? os.tmpdir();
    work = mkdtempSync(path.join(os.tmpdir(), 'copilot-vscode-protocol-'));
    root = path.join(work, 'tollbooth');
    cpSync(fixture, root, { recursive: true });
    rateLimitUri = pathToFileURL(path.join(root, 'src/rate_limit.rs')).toString();
    const script = path.join(work, 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    record = path.join(work, 'requests.jsonl');
    writeFileSync(record, '');
    const port = await startFakeProvider(fake, script, record, outDir);

    child = spawn(bin, [], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'], env: cleanEnv({ XDG_CACHE_HOME: path.join(work, 'cache') }) });
    conn = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    conn.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      diagnostics.set(p.uri, p);
    });
    conn.onNotification('$/progress', (p: (typeof progress)[number]) => {
      progress.push(p);
    });
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => null));
    conn.onRequest('client/registerCapability', () => null);
    conn.onNotification('window/showMessage', () => undefined);
    conn.onNotification('window/logMessage', () => undefined);
    conn.listen();

    init = await conn.sendRequest('initialize', {
      processId: process.pid,
      rootUri: pathToFileURL(root).toString(),
      workspaceFolders: [{ uri: pathToFileURL(root).toString(), name: 'tollbooth' }],
      // What vscode-languageclient offers, in the parts the server reads.
      capabilities: {
        general: { positionEncodings: ['utf-16'] },
        window: { workDoneProgress: true },
        workspace: { workspaceEdit: { documentChanges: true, changeAnnotationSupport: { groupsOnLabel: true } }, configuration: true },
        textDocument: {
          publishDiagnostics: { relatedInformation: true, codeDescriptionSupport: true, dataSupport: true },
          codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'refactor'] } }, dataSupport: true },
          synchronization: { dynamicRegistration: false },
        },
      },
      initializationOptions: { provider: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, model: 'fake', maxSteps: 6 },
    }) as InitializeResult;
    assert.deepEqual([...(init.capabilities.executeCommandProvider?.commands ?? [])].sort(), ['copilot.ask', 'copilot.clear', 'copilot.doctor']);
    assert.ok(init.capabilities.codeActionProvider, 'codeActionProvider');
    await conn.sendNotification('initialized', {});
    const text = readFileSync(path.join(root, 'src/rate_limit.rs'), 'utf8');
    await conn.sendNotification('textDocument/didOpen', { textDocument: { uri: rateLimitUri, languageId: 'rust', version: 1, text } });
  });

  after(async () => {
    try {
      await conn?.sendRequest('shutdown');
      await conn?.sendNotification('exit');
    } catch {
      // Already gone; kill below.
    }
    child?.kill('SIGKILL');
    stopAll();
    if (work) {
      rmSync(work, { recursive: true, force: true });
    }
  });

  let result: AskResult;

  it('answers copilot/ask with the AskResult the view renders', async () => {
    const params = buildAskParams({
      question: 'How does refill work?',
      conversationId: 'conv-protocol',
      editor: { uri: rateLimitUri, scheme: 'file', selection: { start: { line: 34, character: 0 }, end: { line: 39, character: 5 } } },
      workDoneToken: 'tok-1',
      partialResultToken: 'answer-1',
    });
    result = (await conn.sendRequest('copilot/ask', params)) as AskResult;
    assert.equal(result.conversationId, 'conv-protocol');
    assert.equal(result.stopReason, 'answered');
    assert.match(result.answer, /Refilled in `refill`/);
    assert.deepEqual(result.steps.slice(0, 3).map((s) => s.tool), ['search_code', 'read_file', 'propose_edit']);
    const c = result.citations.find((x) => x.path === 'src/rate_limit.rs' && x.line === 26);
    assert.ok(c, JSON.stringify(result.citations));
    assert.equal(c.uri, rateLimitUri);
    assert.equal(c.endLine, 34);
    assert.equal(c.verified, true);
    assert.equal(c.note, 'refill');
    assert.equal(c.range.start.line, 25);
    assert.equal(result.edits.length, 1);
    assert.equal(result.edits[0].title, 'Document refill');
    assert.equal(result.edits[0].path, 'src/rate_limit.rs');
    // v3: the coverage of the ask's search; a small workspace is indexed before it answers.
    assert.equal(result.index?.complete, true, JSON.stringify(result.index));
    assert.ok(result.index.filesIndexed > 0 && result.index.filesIndexed === result.index.filesTotal, JSON.stringify(result.index));
  });

  it('reports each tool call on the workDoneToken', () => {
    const mine = progress.filter((p) => p.token === 'tok-1').map((p) => p.value);
    assert.equal(mine[0]?.kind, 'begin');
    assert.equal(mine[0]?.title, 'Copilot');
    assert.ok(mine.some((v) => v.kind === 'report' && v.message === 'search_code: TokenBucket'), JSON.stringify(mine));
    assert.ok(mine.some((v) => v.kind === 'report' && /^read_file: src\/rate_limit\.rs/.test(v.message ?? '')), JSON.stringify(mine));
    assert.equal(mine.at(-1)?.kind, 'end');
  });

  it('streams AskDeltas on the partialResultToken that the thread turns into the reply', () => {
    const deltas = progress.filter((p) => p.token === 'answer-1').map((p) => p.value as unknown as AskDelta);
    assert.ok(deltas.length > 0, 'deltas arrived');
    const thread = new Thread('conv-protocol');
    const exchange = thread.start('How does refill work?');
    for (const d of deltas) {
      thread.applyDelta(exchange, d);
    }
    // The steps as streamed, turn by turn, are the reply's steps.
    assert.deepEqual(
      exchange.turns.flatMap((t) => t.steps.map((s) => s.tool)),
      result.steps.map((s) => s.tool),
    );
    // The answer tool's string streamed into the last turn, decoded from its partial JSON.
    assert.match(exchange.turns.at(-1)?.text ?? '', /Refilled in `refill`/);
    assert.equal(exchange.turns.at(-1)?.turn, 3);
    thread.complete(exchange, result);
    assert.deepEqual(turnViews(exchange).map((v) => v.kind), ['steps', 'steps']);
  });

  it('publishes citation and suggested-edit diagnostics', async () => {
    const d = await waitUntil('diagnostics for rate_limit.rs', () => {
      const p = diagnostics.get(rateLimitUri);
      return p && p.diagnostics.length >= 2 ? p : undefined;
    }, 10_000);
    const citation = d.diagnostics.find((x) => x.code === 'citation');
    assert.equal(citation?.severity, 3);
    assert.equal(citation?.source, 'copilot');
    assert.equal(citation?.message, 'refill');
    assert.equal(citation?.range.start.line, 25);
    const edit = d.diagnostics.find((x) => x.code === 'suggested-edit');
    assert.equal(edit?.severity, 4);
    assert.deepEqual(edit?.data, { editId: result.edits[0].id });
  });

  it('offers the edit as a quick fix that needs confirmation', async () => {
    const edit = diagnostics.get(rateLimitUri)!.diagnostics.find((x) => x.code === 'suggested-edit')!;
    const actions = (await conn.sendRequest('textDocument/codeAction', {
      textDocument: { uri: rateLimitUri },
      range: edit.range,
      context: { diagnostics: [edit] },
    })) as Array<{ title: string; kind: string; edit: { changeAnnotations?: Record<string, { needsConfirmation?: boolean }>; documentChanges?: unknown[] } }>;
    const fix = actions.find((a) => a.title === 'Copilot: Document refill');
    assert.ok(fix, JSON.stringify(actions));
    assert.equal(fix.kind, 'quickfix');
    const annotations = Object.values(fix.edit.changeAnnotations ?? {});
    assert.ok(annotations.length > 0 && annotations.every((a) => a.needsConfirmation === true), JSON.stringify(fix.edit));
    assert.ok(JSON.stringify(fix.edit.documentChanges).includes('Adds the tokens earned'));
  });

  it('republishes the citation where its text moved, and the thread follows it', async () => {
    await conn.sendNotification('textDocument/didChange', {
      textDocument: { uri: rateLimitUri, version: 2 },
      contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '// a new first line\n' }],
    });
    const moved = await waitUntil('the citation one line down', () => {
      const list = diagnostics.get(rateLimitUri)?.diagnostics ?? [];
      return list.some((x) => x.code === 'citation' && x.range.start.line === 26) ? list : undefined;
    }, 10_000);
    const editId = result.edits[0].id;
    const positions = new LivePositions(result, 'How does refill work?', (u) => u, new Map([[editId, { uri: rateLimitUri, line: 35, endLine: 35 }]]));
    positions.update(
      rateLimitUri,
      moved.map((d) => ({
        code: d.code as 'citation' | 'suggested-edit',
        line: d.range.start.line,
        message: String(d.message),
        editId: (d.data as { editId?: string } | undefined)?.editId,
        citation: citationData(d.data),
      })),
    );
    const index = result.citations.findIndex((c) => c.path === 'src/rate_limit.rs' && c.line === 26);
    assert.deepEqual(citationData(moved.find((d) => d.code === 'citation')?.data), { index, line: 27, endLine: 35 });
    assert.deepEqual(positions.citation(index), { kind: 'followed', location: { uri: rateLimitUri, line: 27, endLine: 35 } });
    // The suggested edit (before `fn refill`, line 35) moved down with it.
    assert.deepEqual(positions.edit(editId), { kind: 'followed', location: { uri: rateLimitUri, line: 36, endLine: 36 } });
  });

  it('answers a cancelled ask with -32800, which the extension keeps quiet', async () => {
    const source = new CancellationTokenSource();
    const pending = conn.sendRequest('copilot/ask', { question: 'hang please' }, source.token);
    await waitUntil('the hanging provider call', () => readFileSync(record, 'utf8').trim().split('\n').length === 4 || undefined, 10_000);
    const t0 = Date.now();
    source.cancel();
    await assert.rejects(pending, (err: { code?: number }) => err.code === -32800);
    assert.ok(Date.now() - t0 < 3000, 'cancelled within a second or two');
    await assert.rejects(pending, (err) => describeAskError(err).kind === 'silent');
  });

  it('fails a provider error with -32803 naming the cause', async () => {
    await assert.rejects(conn.sendRequest('copilot/ask', { question: 'why?' }), (err: { code?: number; message?: string }) => {
      assert.equal(err.code, -32803);
      assert.match(err.message ?? '', /401/);
      const report = describeAskError(err);
      assert.equal(report.kind === 'error' && report.actions[0].args[0], 'copilot-ls.apiKeyEnv');
      return true;
    });
  });

  it('rejects an empty question with -32602', async () => {
    await assert.rejects(conn.sendRequest('copilot/ask', { question: '' }), (err: { code?: number }) => err.code === -32602);
  });

  it('clears the diagnostics on copilot.clear', async () => {
    await conn.sendRequest('workspace/executeCommand', { command: 'copilot.clear', arguments: [] });
    await waitUntil('empty diagnostics', () => (diagnostics.get(rateLimitUri)?.diagnostics.length === 0 ? true : undefined), 10_000);
  });

  it('names the extension\'s own version in serverInfo, so the version check stays quiet', () => {
    // Compiled to out/test/protocol; package.json sits three levels up.
    const manifest = JSON.parse(readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
    assert.deepEqual(init.serverInfo, { name: 'copilot-ls', version: manifest.version });
    const facts = { binary: { path: 'copilot-ls', source: 'PATH' }, running: true, serverVersion: init.serverInfo?.version, commands: [], extensionVersion: manifest.version };
    assert.equal(extensionChecks(facts)[1].status, 'ok');
  });

  // Last: its endpoint check may reach the fake provider, whose script the asks above use.
  it('answers copilot.doctor with checks over the settings of initialize, as Check Setup reads them', async () => {
    const result = (await conn.sendRequest('workspace/executeCommand', { command: 'copilot.doctor', arguments: [] })) as { checks: Array<{ status: string }> };
    assert.ok(result.checks.length >= 3, JSON.stringify(result));
    for (const check of result.checks) {
      assert.ok(['ok', 'warn', 'fail'].includes(check.status), JSON.stringify(check));
    }
    const provider = doctorChecks(result).find((c) => c.name === 'provider');
    assert.ok(provider, JSON.stringify(result));
    assert.match(provider.detail, /openai/, 'the provider of initializationOptions');
  });
});
