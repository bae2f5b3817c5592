// Building the AskParams of one question from what the editor shows. Pure.

import { randomUUID } from 'node:crypto';
import type { AskParams, Range } from './protocol';

export interface EditorContext {
  /** The document's URI as a string, and whether the server can know it (file scheme). */
  uri: string;
  scheme: string;
  /** The selection in LSP coordinates (0-based); an empty one means a bare cursor. */
  selection?: Range;
}

export interface AskRequest {
  question: string;
  /** Reused for a follow-up; a fresh one is made otherwise. */
  conversationId?: string;
  editor?: EditorContext;
  workDoneToken?: string;
  partialResultToken?: string;
}

export function newConversationId(): string {
  return randomUUID();
}

export function isEmptyRange(r: Range): boolean {
  return r.start.line === r.end.line && r.start.character === r.end.character;
}

/** Returns undefined for an empty question: the server would reject it with -32602. */
export function buildAskParams(req: AskRequest): AskParams | undefined {
  const question = req.question.trim();
  if (question === '') {
    return undefined;
  }
  const params: AskParams = {
    question,
    conversationId: req.conversationId ?? newConversationId(),
  };
  // Only file documents are synced to the server (documentSelector scheme 'file'), so an
  // untitled buffer or an output pane would name a document the server never saw.
  if (req.editor && req.editor.scheme === 'file') {
    params.textDocument = { uri: req.editor.uri };
    if (req.editor.selection && !isEmptyRange(req.editor.selection)) {
      params.range = req.editor.selection;
    }
  }
  if (req.workDoneToken !== undefined) {
    params.workDoneToken = req.workDoneToken;
  }
  if (req.partialResultToken !== undefined) {
    params.partialResultToken = req.partialResultToken;
  }
  return params;
}

/**
 * The hint in Ask's input box: what kind of question to type, in any project (it once
 * was the sample workspace's own question).
 */
export const ASK_PLACEHOLDER = 'Ask about this codebase: where, how or why something happens';

/** The default question of "Ask About Selection" when the user just presses Enter. */
export const DEFAULT_SELECTION_QUESTION = 'Explain the selected code.';
