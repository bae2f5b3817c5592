// How a failed ask is told to the user: which message, and which setting fixes it. Pure.

import { ErrorCode } from './protocol';

export interface ErrorAction {
  label: string;
  command: string;
  args: unknown[];
}

export type ErrorReport =
  | { kind: 'silent' }
  | { kind: 'error'; message: string; actions: ErrorAction[] };

export function openSettingsAction(query: string): ErrorAction {
  return { label: 'Open Settings', command: 'workbench.action.openSettings', args: [query] };
}

/** Picks the setting most likely at fault from the server's RequestFailed message. */
export function settingForFailure(message: string): string {
  const m = message.toLowerCase();
  if (/\b(401|403)\b|api key|unauthori[sz]ed|forbidden|authentication/.test(m)) {
    return 'copilot-ls.apiKeyEnv';
  }
  if (/cannot connect|connection refused|connect error|dns|resolve host|base ?url/.test(m)) {
    return 'copilot-ls.baseUrl';
  }
  // The server says `provider did not answer within 120 s (…)`.
  if (/timed? ?out|timeout|did not answer within/.test(m)) {
    return 'copilot-ls.requestTimeoutSecs';
  }
  if (/\bmodel\b/.test(m) && /\b(404|not found|does not exist|unknown)\b/.test(m)) {
    return 'copilot-ls.model';
  }
  if (/no provider|provider/.test(m) && /not configured|unknown provider/.test(m)) {
    return 'copilot-ls.provider';
  }
  return 'copilot-ls.';
}

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  name?: unknown;
}

export function describeAskError(err: unknown): ErrorReport {
  const e = (typeof err === 'object' && err !== null ? err : {}) as ErrorLike;
  const code = typeof e.code === 'number' ? e.code : undefined;
  const raw = typeof e.message === 'string' ? e.message : String(err);

  // The user pressed Cancel: the server's -32800 is the expected outcome, not a failure.
  if (code === ErrorCode.RequestCancelled || code === ErrorCode.ServerCancelled || e.name === 'Canceled') {
    return { kind: 'silent' };
  }
  switch (code) {
    case ErrorCode.RequestFailed:
      return {
        kind: 'error',
        message: `copilot-ls: ${raw}`,
        actions: [openSettingsAction(settingForFailure(raw))],
      };
    case ErrorCode.InvalidParams:
      return { kind: 'error', message: `copilot-ls: the server rejected the question: ${raw}`, actions: [] };
    case ErrorCode.MethodNotFound:
      return {
        kind: 'error',
        message: 'copilot-ls: this server does not know copilot/ask; it is probably too old. Point copilot-ls.server.path at a newer build.',
        actions: [openSettingsAction('copilot-ls.server.path')],
      };
    case ErrorCode.ConnectionInactive:
      return {
        kind: 'error',
        message: 'copilot-ls: the server is not running.',
        actions: [
          { label: 'Restart Server', command: 'copilot-ls.restartServer', args: [] },
          openSettingsAction('copilot-ls.server.path'),
        ],
      };
    default:
      return { kind: 'error', message: `copilot-ls: ${raw}`, actions: [openSettingsAction('copilot-ls.')] };
  }
}
