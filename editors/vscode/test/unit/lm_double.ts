// A test double of VS Code's language model API at the `vscode.lm` boundary: its message
// and part classes (an LmFactory) and a LanguageModelChat that records what it is sent and
// answers with the stream parts it is given. The unit tests and the protocol test (the
// bridge against the real server) share it.

import type { ChatModelLike, LmFactory, ReplyPart } from '../../src/model_mapping';

export type Part =
  | { type: 'text'; value: string }
  | { type: 'toolCall'; callId: string; name: string; input: object }
  | { type: 'toolResult'; callId: string; content: Part[] };
export interface Message {
  role: 'user' | 'assistant';
  content: Part[];
}

export const LM: LmFactory<Message, Part> = {
  user: (content) => ({ role: 'user', content }),
  assistant: (content) => ({ role: 'assistant', content }),
  text: (value) => ({ type: 'text', value }),
  toolCall: (callId, name, input) => ({ type: 'toolCall', callId, name, input }),
  toolResult: (callId, content) => ({ type: 'toolResult', callId, content }),
};

// The stream parts a LanguageModelChat yields, as the double's own classes.
export class TextPart {
  constructor(readonly value: string) {}
}
export class ToolCallPart {
  constructor(
    readonly callId: string,
    readonly name: string,
    readonly input: object,
  ) {}
}
export const readPart = (p: unknown): ReplyPart =>
  p instanceof TextPart ? { kind: 'text', value: p.value } : p instanceof ToolCallPart ? { kind: 'toolCall', callId: p.callId, name: p.name, input: p.input } : { kind: 'other' };

/** A LanguageModelChat that records what it was sent and answers with `parts`. */
export class FakeChatModel implements ChatModelLike<Message> {
  readonly sent: Array<{ messages: Message[]; options: { justification?: string; tools?: unknown[] }; token?: unknown }> = [];
  name: string;
  vendor = 'test-vendor';
  family = 'test-family';
  maxInputTokens = 8000;

  constructor(
    readonly id: string,
    private readonly reply: (token: { isCancellationRequested: boolean }, messages: Message[]) => AsyncIterable<unknown> | Error,
  ) {
    this.name = `Model ${id}`;
  }

  async sendRequest(messages: Message[], options: { justification?: string; tools?: unknown[] }, token?: { isCancellationRequested: boolean }) {
    this.sent.push({ messages, options, token });
    const stream = this.reply(token ?? { isCancellationRequested: false }, messages);
    if (stream instanceof Error) {
      throw stream;
    }
    return { stream };
  }
}
