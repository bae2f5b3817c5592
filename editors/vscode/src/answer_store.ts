// The last answer and the conversation it belongs to: what "Follow Up", "Show Last
// Answer", the citation tree and "Go to Citation" read. Pure, with plain listeners.

import type { AskResult } from './protocol';

export interface Answer {
  question: string;
  result: AskResult;
}

export class AnswerStore {
  private last: Answer | undefined;
  private readonly listeners = new Set<(answer: Answer | undefined) => void>();

  get current(): Answer | undefined {
    return this.last;
  }

  /** The conversation a follow-up continues, if there was an answer. */
  get conversationId(): string | undefined {
    return this.last?.result.conversationId;
  }

  set(question: string, result: AskResult): void {
    this.last = { question, result };
    this.emit();
  }

  clear(): void {
    this.last = undefined;
    this.emit();
  }

  onDidChange(listener: (answer: Answer | undefined) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private emit(): void {
    for (const l of this.listeners) {
      l(this.last);
    }
  }
}
