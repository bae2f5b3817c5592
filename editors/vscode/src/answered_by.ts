// Which model answered an ask, for the thread and the chat (the server's
// `AskResult.model`, else the editor's model the bridge ran), and the note said once (per
// user, kept in the extension's global state) that with the editor's model the question
// and the code read go to that model's provider.

import type * as vscode from 'vscode';
import type { ModelBridge } from './model_bridge';
import { editorModelNotice, modelLabel } from './model_mapping';

const NOTICE_SHOWN = 'copilot-ls.editorModelNoticeShown';

export interface AnsweredBy {
  /** The model's name and vendor, e.g. `GPT-4o (copilot)`. */
  model: string;
  /** The one-time note on what leaves the machine; absent once it was shown. */
  notice?: string;
}

export class EditorModelAnswers {
  constructor(
    private readonly bridge: ModelBridge,
    private readonly state: vscode.Memento,
  ) {}

  /** Forgets the conversation's last model before a new ask of it. */
  starting(conversationId: string | undefined): void {
    this.bridge.forget(conversationId);
  }

  /**
   * Who answered the ask of `conversationId` just ended: `named` is the server's
   * `AskResult.model`; undefined when no model answered.
   */
  ended(conversationId: string | undefined, named: string | undefined): AnsweredBy | undefined {
    const editor = this.bridge.answeredIn(conversationId);
    const model = named ?? (editor ? modelLabel(editor) : undefined);
    if (!model) {
      return undefined;
    }
    if (!editor || this.state.get<boolean>(NOTICE_SHOWN)) {
      return { model };
    }
    void this.state.update(NOTICE_SHOWN, true);
    return { model, notice: editorModelNotice(editor) };
  }
}
