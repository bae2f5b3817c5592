// The connection to copilot-ls: starting and restarting the LanguageClient, keeping the
// server's settings in step with VS Code's, warning once when the server's version is not
// the extension's, and the custom calls the commands make (ask, clear, doctor). Where
// VS Code has the language model API it also declares the editor's models to the server,
// keeps their list current and hands `copilot/model` to the bridge (model_bridge.ts).

import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  ProgressType,
  RevealOutputChannelOn,
  State,
  WorkDoneProgress,
  type ClientCapabilities,
  type Executable,
  type StaticFeature,
  type LanguageClientOptions,
} from 'vscode-languageclient/node';
import { currentServerSettings, noteDeprecatedSettings, watchSettings } from './configuration';
import { AskedQuestions } from './citation_message';
import { describe as describeModels, type EditorModels } from './editor_models';
import type { ModelBridge } from './model_bridge';
import { createMiddleware } from './middleware';
import { openSettingsAction } from './errors';
import type { WorkDoneValue } from './progress_report';
import {
  ASK_METHOD,
  CLEAR_COMMAND,
  DID_CHANGE_EDITOR_MODELS,
  DOCTOR_COMMAND,
  EDITOR_MODELS_CAPABILITY,
  ErrorCode,
  MODEL_METHOD,
  type AskDelta,
  type AskParams,
  type AskResult,
  type EditorModelInfo,
  type ModelDelta,
  type ModelParams,
  type Range,
} from './protocol';
import { resolveServer, type ServerBinary } from './server';
import { serverLogLevel } from './server_log';
import { SECTION } from './settings';
import type { ServerFacts } from './setup_report';
import type { StatusItem } from './status';
import { versionMismatchMessage } from './version_check';

const ASK_DELTA = new ProgressType<AskDelta>();
const MODEL_DELTA = new ProgressType<ModelDelta>();

/** Declares `experimental.copilotEditorModels` in initialize (PROTOCOL.md section 11). */
const editorModelsCapability: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), [EDITOR_MODELS_CAPABILITY]: true };
  },
  initialize(): void {},
  getState: () => ({ kind: 'static' }),
  clear(): void {},
};

export class CopilotClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private starting: Promise<boolean> | undefined;
  /**
   * The LanguageClient's own start, settled once it runs or failed: `starting` also waits
   * for the user to answer the failure's notification, which Check Setup must not.
   */
  private launching: Promise<void> | undefined;
  /** The questions sent, so a citation without a note gets a short message (middleware.ts). */
  private readonly asked = new AskedQuestions();
  /** The binary the last start found, or why it found none (for Check Setup). */
  private binary: ServerBinary | { error: string } = { error: 'the server has not been started yet' };
  /** Server binaries and versions already warned about: one warning each per window. */
  private readonly versionsWarned = new Set<string>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly status: StatusItem,
    private readonly editorModels: EditorModels,
    private readonly bridge: ModelBridge,
  ) {
    this.disposables.push(
      // The server follows the list: models often appear seconds after start-up.
      editorModels.onDidChange((models) => {
        if (this.isRunning) {
          void this.client?.sendNotification(DID_CHANGE_EDITOR_MODELS, { models });
        }
      }),
      watchSettings(
        currentServerSettings(),
        (change) => {
          noteDeprecatedSettings(this.log);
          if (change.kind === 'notify') {
            // The server reads `settings["copilot-ls"]` (or the older `settings.copilot`);
            // only keys the user set are sent, so the server's environment keeps ranking
            // above its built-in defaults.
            this.log.info(`sending settings to the server: ${JSON.stringify(change.settings)}`);
            void this.client?.sendNotification('workspace/didChangeConfiguration', {
              settings: { [SECTION]: change.settings },
            });
          } else if (change.kind === 'restart') {
            this.log.info(`restarting the server after the ${change.reason}`);
            void this.restart();
          }
        },
        () => void this.restart(),
      ),
    );
  }

  get isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  /** Starts the server; false (after telling the user why) when it cannot run. */
  start(): Promise<boolean> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<boolean> {
    this.status.set({ state: 'starting' });
    const server = resolveServer(this.context, this.log);
    this.binary = server;
    if ('error' in server) {
      this.status.set({ state: 'stopped', reason: server.error });
      return false;
    }
    // No arguments and no `transport`: vscode-languageclient would append `--stdio` for
    // TransportKind.stdio, while plain `copilot-ls` is already LSP over stdio.
    const run: Executable = { command: server.path, args: [], options: { env: process.env } };
    // The editor's models, where VS Code can run them with tools: the server then
    // defaults to them when no provider and no key are set (PROTOCOL.md section 11).
    const models: EditorModelInfo[] | undefined = this.editorModels.supported ? await this.editorModels.list() : undefined;
    if (models) {
      this.log.info(`the editor's language models: ${describeModels(models)}`);
    }
    const clientOptions: LanguageClientOptions = {
      // Every file, so the server sees the editor's text of whatever the user asks about.
      documentSelector: [{ scheme: 'file' }],
      // No `workspaceFolder`: unbound to one, the client sends every folder of the window
      // in `initialize` and, as the server asks (`changeNotifications`), each folder added
      // or removed later. Each is a root of the server; with several, the paths it shows
      // start with the folder's directory name (docs/protocol.md section 10).
      initializationOptions: { ...currentServerSettings(), ...(models ? { editorModels: models } : {}) },
      outputChannel: this.log,
      middleware: createMiddleware(this.asked),
      // Ask failures get their own notification with a fix (errors.ts); the client's
      // generic "request failed" popups would only repeat them.
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      stdioOptions: {
        // stdout is the protocol; only used by the client for other transports.
        stdout: (input, channel) => forwardLines(input, (line) => channel.info(line)),
        stderr: (input, channel) => forwardLines(input, (line) => channel[serverLogLevel(line)](line)),
      },
    };
    noteDeprecatedSettings(this.log);
    // The id names the trace setting: copilot-ls.trace.server.
    const client = new LanguageClient('copilot-ls', 'copilot-ls', { run, debug: run }, clientOptions);
    this.client = client;
    if (models) {
      this.log.info(`initialize declares experimental.${EDITOR_MODELS_CAPABILITY} with ${models.length} editor models`);
      client.registerFeature(editorModelsCapability);
      client.onRequest(MODEL_METHOD, (params: ModelParams, token) =>
        this.bridge.answer(params, token, (delta) => void client.sendProgress(MODEL_DELTA, params.partialResultToken, delta)),
      );
    }
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        this.status.set({ state: 'running', path: server.path, source: server.source });
      } else if (e.newState === State.Stopped && this.client === client) {
        this.status.set({ state: 'stopped', reason: 'copilot-ls is not running.' });
      }
    });
    const launch = client.start();
    this.launching = launch.catch(() => undefined);
    try {
      await launch;
      this.checkVersion(client, server);
      return true;
    } catch (err) {
      this.log.error(`copilot-ls failed to start: ${String(err)}`);
      this.status.set({ state: 'stopped', reason: `copilot-ls at ${server.path} failed to start.` });
      const action = openSettingsAction('copilot-ls.server.path');
      const picked = await vscode.window.showErrorMessage(
        `copilot-ls: the server at ${server.path} (from ${server.source}) failed to start. See the copilot-ls output for details.`,
        action.label,
      );
      if (picked === action.label) {
        void vscode.commands.executeCommand(action.command, ...action.args);
      }
      return false;
    }
  }

  /** This extension's version (package.json), which the server's should equal. */
  get extensionVersion(): string {
    return String(this.context.extension.packageJSON.version);
  }

  /** Warns when the server is not this extension's version; once per binary and version. */
  private checkVersion(client: LanguageClient, server: ServerBinary): void {
    const version = client.initializeResult?.serverInfo?.version;
    this.log.info(`copilot-ls server version ${version ?? '(not sent)'}, extension version ${this.extensionVersion}`);
    const message = versionMismatchMessage(version, this.extensionVersion);
    const key = `${server.path}\n${version}`;
    if (!message || this.versionsWarned.has(key)) {
      return;
    }
    this.versionsWarned.add(key);
    this.log.warn(message);
    void vscode.window.showWarningMessage(`${message} (at ${server.path}, from ${server.source}).`);
  }

  /** What Check Setup reports about the server; waits for a start in progress, starts none. */
  async setupFacts(): Promise<ServerFacts> {
    await this.launching;
    const client = this.client;
    const running = client?.state === State.Running;
    const init = running ? client.initializeResult : undefined;
    return {
      binary: this.binary,
      running,
      serverVersion: init?.serverInfo?.version,
      commands: init?.capabilities.executeCommandProvider?.commands ?? [],
      extensionVersion: this.extensionVersion,
    };
  }

  /** Runs the server's checks (`copilot.doctor`) over its current settings. */
  async doctor(): Promise<unknown> {
    const client = await this.ready();
    return client.sendRequest(ExecuteCommandRequest.type, { command: DOCTOR_COMMAND, arguments: [] });
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client && client.state !== State.Stopped) {
      try {
        await client.stop();
      } catch (err) {
        this.log.warn(`stopping copilot-ls: ${String(err)}`);
      }
    }
  }

  async restart(): Promise<boolean> {
    await this.starting;
    await this.stop();
    return this.start();
  }

  /** The running client, starting it if needed; throws ConnectionInactive if it cannot run. */
  private async ready(): Promise<LanguageClient> {
    if (this.starting) {
      await this.starting;
    } else if (!this.client) {
      // Not started yet (activation still running) or the binary was missing: try now,
      // so that fixing the setting and asking again just works.
      await this.start();
    }
    const client = this.client;
    if (!client || client.state !== State.Running) {
      throw Object.assign(new Error('the copilot-ls server is not running'), { code: ErrorCode.ConnectionInactive });
    }
    return client;
  }

  uriToServer(uri: vscode.Uri): string {
    return this.client ? this.client.code2ProtocolConverter.asUri(uri) : uri.toString();
  }

  rangeToServer(range: vscode.Range): Range {
    return {
      start: { line: range.start.line, character: range.start.character },
      end: { line: range.end.line, character: range.end.character },
    };
  }

  /**
   * Sends copilot/ask. Cancelling `token` sends `$/cancelRequest`; the server then
   * answers -32800, which callers treat as a quiet outcome. Reports on the workDoneToken
   * go to `onWork`, AskDeltas on the partialResultToken to `onDelta`.
   */
  async ask(
    params: AskParams,
    token: vscode.CancellationToken,
    onWork: (value: WorkDoneValue) => void,
    onDelta: (delta: AskDelta) => void,
  ): Promise<AskResult> {
    const client = await this.ready();
    this.asked.add(params.question);
    const subs = [
      params.workDoneToken !== undefined
        ? client.onProgress(WorkDoneProgress.type, params.workDoneToken, (value) => onWork(value as WorkDoneValue))
        : undefined,
      params.partialResultToken !== undefined
        ? client.onProgress(ASK_DELTA, params.partialResultToken, (value) => onDelta(value))
        : undefined,
    ];
    try {
      return await client.sendRequest<AskResult>(ASK_METHOD, params, token);
    } finally {
      for (const sub of subs) {
        sub?.dispose();
      }
    }
  }

  /** Asks the server to drop its answers and their diagnostics (`copilot.clear`). */
  async clear(): Promise<void> {
    if (!this.isRunning || !this.client) {
      return;
    }
    await this.client.sendRequest(ExecuteCommandRequest.type, { command: CLEAR_COMMAND, arguments: [] });
  }

  dispose(): void {
    for (const d of this.disposables) {
      d.dispose();
    }
    void this.stop();
  }
}

function forwardLines(input: Readable, write: (line: string) => void): void {
  createInterface({ input, crlfDelay: Infinity, terminal: false }).on('line', write);
}
