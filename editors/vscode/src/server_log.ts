// Which level a line the server writes to stderr belongs to. copilot-ls logs with
// `tracing`, whose lines carry their own level; everything on stderr would otherwise be
// shown as an error in the copilot-ls output. Pure.

export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace';

const LEVELS: Record<string, LogLevel> = { ERROR: 'error', WARN: 'warn', INFO: 'info', DEBUG: 'debug', TRACE: 'trace' };

export function serverLogLevel(line: string): LogLevel {
  // tracing's default format: `2026-11-30T00:06:06.909449Z  INFO target: message`.
  const m = /^\S*\s+(ERROR|WARN|INFO|DEBUG|TRACE)\s/.exec(line) ?? /^(ERROR|WARN|INFO|DEBUG|TRACE)\b/.exec(line);
  // A line without a level (a panic message, a backtrace) is worth seeing.
  return m ? LEVELS[m[1]] : 'error';
}
