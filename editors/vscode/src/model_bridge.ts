// Answers the server's `copilot/model` requests (PROTOCOL.md section 11) with the
// editor's own model: `LanguageModelChat.sendRequest` with the conversation and the tools,
// its text streamed back as `$/progress` deltas on the request's partialResultToken, the
// whole turn as the reply; the request's cancellation (`$/cancelRequest`) stops the model;
// the API's errors (no model, consent declined, a quota) are a -32803 reply the server
// turns into its no-model answer or a provider error. The call itself is
// model_mapping.ts's `runModelCall`; this file binds it to `vscode.lm` and remembers
// which model answered each conversation, for the thread.

import * as vscode from 'vscode';
import { ResponseError } from 'vscode-languageclient/node';
import type { EditorModels } from './editor_models';
import { modelInfo, modelLabel, ModelCallError, runModelCall, type LmFactory, type ReplyPart } from './model_mapping';
import type { EditorModelInfo, ModelDelta, ModelParams, ModelResult } from './protocol';

type LmPart = vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart | vscode.LanguageModelToolResultPart;

/** The API's own classes, for model_mapping.ts. */
export const VSCODE_LM: LmFactory<vscode.LanguageModelChatMessage, LmPart> = {
  user: (parts) => vscode.LanguageModelChatMessage.User(parts as Array<vscode.LanguageModelTextPart | vscode.LanguageModelToolResultPart>),
  assistant: (parts) => vscode.LanguageModelChatMessage.Assistant(parts as Array<vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart>),
  text: (value) => new vscode.LanguageModelTextPart(value),
  toolCall: (callId, name, input) => new vscode.LanguageModelToolCallPart(callId, name, input),
  toolResult: (callId, content) => new vscode.LanguageModelToolResultPart(callId, content as vscode.LanguageModelTextPart[]),
};

function readPart(part: unknown): ReplyPart {
  if (part instanceof vscode.LanguageModelTextPart) {
    return { kind: 'text', value: part.value };
  }
  if (part instanceof vscode.LanguageModelToolCallPart) {
    return { kind: 'toolCall', callId: part.callId, name: part.name, input: part.input };
  }
  return { kind: 'other' };
}

export class ModelBridge {
  /** The model that answered each conversation's latest model call. */
  private readonly answeredBy = new Map<string, EditorModelInfo>();
  /** Ids no longer listed that were already reported (once each per window). */
  private readonly reported = new Set<string>();

  constructor(
    private readonly models: EditorModels,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** The model that last answered in `conversationId`, if the editor's did. */
  answeredIn(conversationId: string | undefined): EditorModelInfo | undefined {
    return conversationId ? this.answeredBy.get(conversationId) : undefined;
  }

  /** Forgets who answered `conversationId`: a new ask may go to another provider. */
  forget(conversationId: string | undefined): void {
    if (conversationId) this.answeredBy.delete(conversationId);
  }

  /**
   * Runs one model call; `sendDelta` posts a `$/progress` value on the request's token.
   * Throws a ResponseError: -32803 with the reason when the model cannot answer, -32800
   * when the server cancelled the call.
   */
  async answer(params: ModelParams, token: vscode.CancellationToken, sendDelta: (delta: ModelDelta) => void): Promise<ModelResult> {
    // The request's token is vscode-jsonrpc's; the model gets one of VS Code's own, tied to it.
    const source = new vscode.CancellationTokenSource();
    const tied = token.onCancellationRequested(() => source.cancel());
    if (token.isCancellationRequested) {
      source.cancel();
    }
    const models = await this.models.chatModels();
    try {
      const { result, model, replaced } = await runModelCall(params, { models, lm: VSCODE_LM, readPart, token: source.token, sendDelta });
      if (replaced) {
        this.log.warn(`copilot/model: ${replaced}`);
        if (!this.reported.has(params.model)) {
          this.reported.add(params.model);
          void vscode.window.showWarningMessage(`copilot-ls: ${replaced}.`);
        }
      }
      this.answeredBy.set(params.conversationId, modelInfo(model));
      this.log.info(`copilot/model: ${modelLabel(model)} wrote ${result.text.length} characters and ${result.toolCalls.length} tool calls`);
      return result;
    } catch (err) {
      if (err instanceof ModelCallError) {
        this.log.warn(`copilot/model: ${err.message}`);
        throw new ResponseError(err.code, err.message);
      }
      throw err;
    } finally {
      tied.dispose();
      source.dispose();
    }
  }
}
