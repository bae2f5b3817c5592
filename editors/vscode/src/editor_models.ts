// The editor's language models as the server sees them (PROTOCOL.md section 11): whether
// this VS Code can run model requests with tools (the capability), the list
// `vscode.lm.selectChatModels()` gives (`initializationOptions.editorModels`), and each
// change of it (`copilot/didChangeEditorModels`; models often appear after start-up).

import * as vscode from 'vscode';
import { modelInfo } from './model_mapping';
import type { EditorModelInfo } from './protocol';

/**
 * Whether VS Code's language model API is here with tool calling: `vscode.lm` with its
 * model list and change event, and the tool-call and tool-result parts. A VS Code older
 * than 1.95, or a host without the API, declares nothing.
 */
export function hasModelApi(): boolean {
  const api = vscode as Partial<typeof vscode>;
  return (
    typeof api.lm?.selectChatModels === 'function' &&
    typeof api.lm?.onDidChangeChatModels === 'function' &&
    typeof api.LanguageModelToolCallPart === 'function' &&
    typeof api.LanguageModelToolResultPart === 'function' &&
    typeof api.LanguageModelChatMessage?.User === 'function'
  );
}

export class EditorModels implements vscode.Disposable {
  readonly supported = hasModelApi();
  private readonly changed = new vscode.EventEmitter<EditorModelInfo[]>();
  /** Fires with the new list whenever the editor's models change. */
  readonly onDidChange = this.changed.event;
  private readonly subs: vscode.Disposable[] = [this.changed];

  constructor(private readonly log: vscode.LogOutputChannel) {
    if (this.supported) {
      this.subs.push(
        vscode.lm.onDidChangeChatModels(() => {
          void this.list().then((models) => {
            this.log.info(`the editor's language models changed: ${describe(models)}`);
            this.changed.fire(models);
          });
        }),
      );
    }
  }

  /** The models themselves, to send requests to; none without the API. */
  async chatModels(): Promise<vscode.LanguageModelChat[]> {
    if (!this.supported) {
      return [];
    }
    try {
      return await vscode.lm.selectChatModels();
    } catch (err) {
      this.log.warn(`listing the editor's language models failed: ${String(err)}`);
      return [];
    }
  }

  /** The models as `editorModels` lists them. */
  async list(): Promise<EditorModelInfo[]> {
    return (await this.chatModels()).map(modelInfo);
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
  }
}

export function describe(models: EditorModelInfo[]): string {
  return models.length === 0 ? 'none' : models.map((m) => `${m.id} (${m.vendor}/${m.family})`).join(', ');
}
