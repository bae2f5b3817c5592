// What the `@copilot-ls` chat participant writes that is not a VS Code call: the
// conversation a follow-up continues (kept in each response's metadata), the reply's
// answer when it is not what streamed, a suggested edit's diff as a fenced block and the
// link that applies it.
// Pure, so plain Node tests check it.

import { APPLY_SUGGESTED_EDIT_COMMAND_ID } from './command_ids';
import { diffLines, proposedTexts } from './edit_diff';
import type { AskResult, SuggestedEdit } from './protocol';

/** The metadata of each of our chat responses. */
export interface ChatAnswerMetadata {
  conversationId: string;
}

/** A turn of the chat's history, as far as this reads it. */
export interface HistoryTurn {
  participant: string;
  result?: { metadata?: { [key: string]: unknown } };
}

/** The conversation of the latest of our answers in the chat's history, if any. */
export function conversationOf(history: readonly HistoryTurn[], participant: string): string | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const turn = history[i];
    const id = turn.participant === participant ? turn.result?.metadata?.conversationId : undefined;
    if (typeof id === 'string' && id !== '') {
      return id;
    }
  }
  return undefined;
}

/**
 * What to write after the streamed text once the reply is in: nothing when the last
 * turn's streamed text is the answer; else the answer (the reply is authoritative),
 * after a rule when something else streamed before it.
 */
export function answerAfterStream(streamedLastTurn: string, streamedAny: boolean, answer: string): string {
  const said = answer.trim();
  if (said === '' || streamedLastTurn.trim() === said) {
    return '';
  }
  return streamedAny ? `\n\n---\n\n${said}\n` : `${said}\n`;
}

/** A suggested edit's change as a fenced diff; empty when its texts are unknown. */
export function editDiffMarkdown(edit: SuggestedEdit, result: AskResult): string {
  const texts = proposedTexts(edit, result.edits, result.steps);
  if (!texts) {
    return '';
  }
  const lines = diffLines(texts.oldText, texts.newText).map((l) => {
    const sign = l.kind === 'removed' ? '-' : l.kind === 'added' ? '+' : l.kind === 'hunk' ? '' : ' ';
    return sign + l.text;
  });
  const fence = lines.some((l) => l.includes('```')) ? '~~~~' : '```';
  return `${fence}diff\n${lines.join('\n')}\n${fence}\n`;
}

/**
 * The markdown link that applies a suggested edit: the command of the thread's Apply,
 * with the edit as its argument (the response's markdown trusts that one command).
 */
export function applyLink(edit: SuggestedEdit): string {
  const args = encodeURIComponent(JSON.stringify([edit]));
  return `[**Apply…** ${edit.title.replace(/[[\]\\]/g, '\\$&')}](command:${APPLY_SUGGESTED_EDIT_COMMAND_ID}?${args} "Review the change in the Refactor Preview, then apply it")`;
}
