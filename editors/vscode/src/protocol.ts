// The wire types of copilot-ls (PROTOCOL.md section 3) as the extension sees them.
// Kept free of `vscode` imports so plain Node tests can use them.

/** LSP position: 0-based line and character. */
export interface Position {
  line: number;
  character: number;
}

/** LSP range: 0-based, end exclusive. */
export interface Range {
  start: Position;
  end: Position;
}

export interface AskParams {
  question: string;
  conversationId?: string;
  textDocument?: { uri: string };
  range?: Range;
  workDoneToken?: string | number;
  /** The answer streams on it as AskDelta values of `$/progress`. */
  partialResultToken?: string | number;
  /** PROTOCOL.md v5: the editor model for this ask alone (the Chat view's picker). */
  editorModel?: string;
}

export interface Citation {
  uri: string;
  range: Range;
  path: string;
  /** 1-based first line. */
  line: number;
  /** 1-based last line. */
  endLine: number;
  note?: string;
  verified: boolean;
}

export interface SuggestedEdit {
  id: string;
  title: string;
  path: string;
  uri: string;
  // A WorkspaceEdit; the extension never applies it itself (the server offers it as a
  // quick fix), so its shape does not matter here.
  edit: unknown;
}

export interface Step {
  tool: string;
  arguments: Record<string, unknown>;
  ok: boolean;
  summary: string;
  /** On the first step of a model turn: the text the model wrote before its calls. */
  thought?: string;
}

/** The value of each `$/progress` on AskParams.partialResultToken. */
export interface AskDelta {
  /** 1-based model call this delta belongs to. */
  turn: number;
  /** Model text to append to that turn, as it is written. */
  text?: string;
  /** A tool call of that turn that just finished. */
  step?: Step;
}

export interface Usage {
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}

export type StopReason = 'answered' | 'max_steps' | 'no_provider' | 'cancelled';

export interface AskResult {
  conversationId: string;
  answer: string;
  citations: Citation[];
  edits: SuggestedEdit[];
  steps: Step[];
  stopReason: StopReason;
  /** Absent from servers older than PROTOCOL.md v2. */
  usage?: Usage;
  /**
   * What the ask's search could see (PROTOCOL.md v3); absent from older servers. While
   * the first build runs, `complete` is false and the answer's first line says so
   * ("Indexing is 34% done …"), so the thread shows it as part of the answer.
   */
  index?: IndexCoverage;
  /**
   * The model that answered, as people read it (a model name, or the editor model's name
   * and vendor); absent when no model did, and from servers before v5.
   */
  model?: string;
}

/** AskResult.index (PROTOCOL.md v3). */
export interface IndexCoverage {
  /** False while the workspace's first index build is still running. */
  complete: boolean;
  filesIndexed: number;
  /** The walk's count so far (>= filesIndexed). */
  filesTotal: number;
}

export const ASK_METHOD = 'copilot/ask';
export const CLEAR_COMMAND = 'copilot.clear';
/** `workspace/executeCommand` that checks the setup (PROTOCOL.md section 10, v4). */
export const DOCTOR_COMMAND = 'copilot.doctor';

/** One check of `copilot.doctor` (and `copilot-ls doctor --json`). */
export interface DoctorCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  /** What was found, and what to do when it is not ok. */
  detail: string;
}

/** The result of `copilot.doctor`. */
export interface DoctorResult {
  checks: DoctorCheck[];
}

/** JSON-RPC error codes the extension treats specially. */
export const ErrorCode = {
  InvalidParams: -32602,
  MethodNotFound: -32601,
  RequestCancelled: -32800,
  ServerCancelled: -32802,
  RequestFailed: -32803,
  // vscode-jsonrpc's code for "the connection is not running".
  ConnectionInactive: -32095,
} as const;

// ---- The editor's model (PROTOCOL.md section 11, v5) ----

/** One of the editor's language models, as `initializationOptions.editorModels` lists it. */
export interface EditorModelInfo {
  id: string;
  name: string;
  vendor: string;
  family: string;
  maxInputTokens: number;
}

export interface ModelToolCall {
  id: string;
  name: string;
  arguments: object;
}

export interface ModelMessage {
  role: 'user' | 'assistant' | 'tool';
  text?: string;
  /** Assistant only. */
  toolCalls?: ModelToolCall[];
  /** Tool only: the call this result answers. */
  toolCallId?: string;
}

export interface ModelTool {
  name: string;
  description: string;
  inputSchema: object;
}

/** The params of the server-to-client request `copilot/model`. */
export interface ModelParams {
  conversationId: string;
  model: string;
  system: string;
  messages: ModelMessage[];
  tools: ModelTool[];
  maxOutputTokens?: number;
  partialResultToken: string | number;
}

/** Each `$/progress` value on ModelParams.partialResultToken. */
export interface ModelDelta {
  text?: string;
}

export interface ModelResult {
  model: string;
  text: string;
  toolCalls: ModelToolCall[];
  stopReason: 'end' | 'tool_calls' | 'max_tokens';
  usage?: { inputTokens: number; outputTokens: number };
}

export const MODEL_METHOD = 'copilot/model';
export const DID_CHANGE_EDITOR_MODELS = 'copilot/didChangeEditorModels';
/** The experimental client capability that says the client answers `copilot/model`. */
export const EDITOR_MODELS_CAPABILITY = 'copilotEditorModels';
