// What crosses between `copilot/model` (PROTOCOL.md section 11) and VS Code's language
// model API: ModelParams' messages as the API's user and assistant messages (tool calls
// and tool results as its parts, the system prompt first in the first user message since
// the API has no system role), the reply's stream gathered into a ModelResult, the model
// chosen among those listed, and the API's errors as the reply's message. Pure: the API's
// classes are handed in (`LmFactory`), so plain Node tests use a test double of them.

import { ErrorCode } from './protocol';
import type { EditorModelInfo, ModelDelta, ModelParams, ModelResult, ModelTool, ModelToolCall } from './protocol';

/** Builds the API's messages and parts; model_bridge.ts hands in `vscode.LanguageModel*`. */
export interface LmFactory<Message, Part> {
  user(parts: Part[]): Message;
  assistant(parts: Part[]): Message;
  text(value: string): Part;
  toolCall(callId: string, name: string, input: object): Part;
  toolResult(callId: string, content: Part[]): Part;
}

/**
 * The conversation as the API's messages, oldest first. Consecutive user and tool
 * messages become one user message (tool results first, as the vendors behind the API
 * want them right after the assistant's calls); the system prompt is the first part of
 * the first user message, or a user message of its own when the conversation opens with
 * the assistant.
 */
export function toLmMessages<Message, Part>(params: Pick<ModelParams, 'system' | 'messages'>, lm: LmFactory<Message, Part>): Message[] {
  const out: Message[] = [];
  let system = params.system.trim() === '' ? undefined : params.system;
  let userParts: Part[] | undefined;
  const flushUser = () => {
    if (userParts && userParts.length > 0) {
      out.push(lm.user(userParts));
    }
    userParts = undefined;
  };
  const userSide = (): Part[] => {
    if (!userParts) {
      userParts = [];
      if (system !== undefined) {
        userParts.push(lm.text(system));
        system = undefined;
      }
    }
    return userParts;
  };
  for (const m of params.messages) {
    switch (m.role) {
      case 'user':
        if (m.text) {
          userSide().push(lm.text(m.text));
        }
        break;
      case 'tool':
        userSide().push(lm.toolResult(m.toolCallId ?? '', [lm.text(m.text ?? '')]));
        break;
      case 'assistant': {
        if (system !== undefined) {
          userSide();
        }
        flushUser();
        const parts: Part[] = [];
        if (m.text) {
          parts.push(lm.text(m.text));
        }
        for (const call of m.toolCalls ?? []) {
          parts.push(lm.toolCall(call.id, call.name, call.arguments ?? {}));
        }
        out.push(lm.assistant(parts.length > 0 ? parts : [lm.text('')]));
        break;
      }
    }
  }
  if (system !== undefined) {
    userSide();
  }
  flushUser();
  return out;
}

/** The tools as `LanguageModelChatTool`s (the same three fields). */
export function toLmTools(tools: ModelTool[]): Array<{ name: string; description: string; inputSchema: object }> {
  return tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
}

/** A part of the reply's stream, as the bridge recognises it. */
export type ReplyPart = { kind: 'text'; value: string } | { kind: 'toolCall'; callId: string; name: string; input: object } | { kind: 'other' };

/** Gathers the reply's stream into the turn; each text part is also a delta for display. */
export class ReplyCollector {
  private text = '';
  private readonly toolCalls: ModelToolCall[] = [];

  constructor(private readonly onDelta: (text: string) => void) {}

  add(part: ReplyPart): void {
    if (part.kind === 'text') {
      if (part.value !== '') {
        this.text += part.value;
        this.onDelta(part.value);
      }
    } else if (part.kind === 'toolCall') {
      this.toolCalls.push({ id: part.callId, name: part.name, arguments: part.input ?? {} });
    }
  }

  /**
   * The whole turn. The API says nothing of why the model stopped nor of the tokens used:
   * a turn with tool calls stopped for them, any other ended.
   */
  result(model: string): ModelResult {
    return { model, text: this.text, toolCalls: [...this.toolCalls], stopReason: this.toolCalls.length > 0 ? 'tool_calls' : 'end' };
  }
}

/** The listing a chat model gives of itself, as `editorModels` lists it. */
export function modelInfo(m: { id: string; name: string; vendor: string; family: string; maxInputTokens: number }): EditorModelInfo {
  return { id: m.id, name: m.name, vendor: m.vendor, family: m.family, maxInputTokens: m.maxInputTokens };
}

/** How a model is named to the user: its name and vendor. */
export function modelLabel(m: Pick<EditorModelInfo, 'name' | 'vendor'>): string {
  return m.vendor && m.vendor !== m.name ? `${m.name} (${m.vendor})` : m.name;
}

export type ModelChoice<M> = { model: M; replaced?: string } | { error: string };

/**
 * The model to answer with: the one of `id`, else (an id no longer listed) the first
 * listed, with `replaced` saying so; an error when none is listed.
 */
export function chooseModel<M extends { id: string; name: string; vendor: string }>(models: readonly M[], id: string | undefined): ModelChoice<M> {
  const found = id ? models.find((m) => m.id === id) : undefined;
  if (found) {
    return { model: found };
  }
  if (models.length === 0) {
    return {
      error:
        'the editor lists no language model: install or sign in to an extension that provides one (GitHub Copilot, for one), or set copilot-ls.provider to openai or anthropic',
    };
  }
  const first = models[0];
  if (!id) {
    return { model: first };
  }
  return {
    model: first,
    replaced: `the editor model "${id}" is no longer listed; using ${modelLabel(first)} instead (copilot-ls: Choose Model picks another)`,
  };
}

/** `LanguageModelError`'s codes (vscode.LanguageModelError.NoPermissions().code, ...). */
const CONSENT = 'NoPermissions';
const BLOCKED = 'Blocked';
const NOT_FOUND = 'NotFound';

/** The message of the `-32803` reply for an error the API threw, naming the model. */
export function modelErrorMessage(err: unknown, model: string): string {
  const e = err as { code?: unknown; message?: unknown; name?: unknown } | undefined;
  const said = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
  const code = typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : '';
  if (code === CONSENT || code.endsWith(CONSENT)) {
    return `the user did not allow copilot-ls to use ${model} (VS Code asked for consent): allow it and ask again, or pick another model with copilot-ls: Choose Model (${said})`;
  }
  if (code === BLOCKED || code.endsWith(BLOCKED)) {
    return `${model} refused the request (blocked, for example by a quota or rate limit): ${said}`;
  }
  if (code === NOT_FOUND || code.endsWith(NOT_FOUND)) {
    return `${model} is not available: ${said}`;
  }
  return `${model} failed: ${said}`;
}

/**
 * Said once, the first time the editor's model answers: what leaves the machine, and to
 * whom.
 */
export function editorModelNotice(m: Pick<EditorModelInfo, 'name' | 'vendor'>): string {
  return (
    `This answer was written by ${modelLabel(m)}, one of VS Code's language models: with the editor's model, ` +
    `your question and the code copilot-ls reads to answer it go to that model's provider (${m.vendor}). ` +
    'Secrets copilot-ls recognises are redacted first, as for any provider.'
  );
}

/** What the bridge needs of a `LanguageModelChat` (a test double stands in for it in tests). */
export interface ChatModelLike<Message> {
  id: string;
  name: string;
  vendor: string;
  family: string;
  maxInputTokens: number;
  sendRequest(
    messages: Message[],
    options: { justification?: string; tools?: Array<{ name: string; description: string; inputSchema: object }> },
    token?: CancellationLike,
  ): PromiseLike<{ stream: AsyncIterable<unknown> }>;
}

export interface CancellationLike {
  readonly isCancellationRequested: boolean;
}

/** A `copilot/model` call that ends in an error reply: -32803 with why, or -32800. */
export class ModelCallError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Why copilot-ls asks the user's model, for VS Code's consent prompt. */
export const JUSTIFICATION = 'copilot-ls answers your question about this codebase: the model reads the code through its search tools and cites it.';

export interface ModelCall<Message, Part, M extends ChatModelLike<Message>> {
  /** The models the editor lists now (`vscode.lm.selectChatModels()`). */
  models: readonly M[];
  lm: LmFactory<Message, Part>;
  /** Tells the reply's stream parts apart (instanceof the API's classes). */
  readPart: (part: unknown) => ReplyPart;
  token: CancellationLike;
  sendDelta: (delta: ModelDelta) => void;
}

/**
 * One `copilot/model` call: the model chosen, the conversation sent with the tools, its
 * text streamed as deltas and gathered, with its tool calls, into the reply. Throws a
 * ModelCallError for an error reply.
 */
export async function runModelCall<Message, Part, M extends ChatModelLike<Message>>(
  params: ModelParams,
  call: ModelCall<Message, Part, M>,
): Promise<{ result: ModelResult; model: M; replaced?: string }> {
  const choice = chooseModel(call.models, params.model);
  if ('error' in choice) {
    throw new ModelCallError(ErrorCode.RequestFailed, choice.error);
  }
  const model = choice.model;
  const collector = new ReplyCollector((text) => call.sendDelta({ text }));
  const cancelled = () => new ModelCallError(ErrorCode.RequestCancelled, 'cancelled');
  try {
    const response = await model.sendRequest(toLmMessages(params, call.lm), { justification: JUSTIFICATION, tools: toLmTools(params.tools) }, call.token);
    for await (const part of response.stream) {
      if (call.token.isCancellationRequested) {
        break;
      }
      collector.add(call.readPart(part));
    }
  } catch (err) {
    if (call.token.isCancellationRequested) {
      throw cancelled();
    }
    throw new ModelCallError(ErrorCode.RequestFailed, modelErrorMessage(err, modelLabel(model)));
  }
  if (call.token.isCancellationRequested) {
    throw cancelled();
  }
  return { result: collector.result(model.id), model, replaced: choice.replaced };
}
