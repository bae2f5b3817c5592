// What Check Setup shows: the extension's own checks (which server runs, whether its
// version is the extension's) followed by the server's `copilot.doctor` checks, one line
// each with ok, warn or fail, their advice in VS Code's words (the settings to change,
// not the environment variables a command line sets). Pure, so the formatting is unit
// tested in plain Node.

import type { DoctorCheck } from './protocol';
import { versionMismatchMessage } from './version_check';

/** What the extension knows about the server when Check Setup runs. */
export interface ServerFacts {
  /** The binary found (discovery.ts), or why none was. */
  binary: { path: string; source: string } | { error: string };
  running: boolean;
  /** `serverInfo.version` of `initialize`; undefined when not running or not sent. */
  serverVersion?: string;
  /** `executeCommandProvider.commands` of `initialize`. */
  commands: string[];
  extensionVersion: string;
}

/** The checks the extension makes itself, before the server's. */
export function extensionChecks(facts: ServerFacts): DoctorCheck[] {
  if ('error' in facts.binary) {
    return [{ name: 'server', status: 'fail', detail: facts.binary.error }];
  }
  const where = `${facts.binary.path} (from ${facts.binary.source})`;
  if (!facts.running) {
    return [{ name: 'server', status: 'fail', detail: `${where} is not running: see the copilot-ls output, then run copilot-ls: Restart Server` }];
  }
  const mismatch = versionMismatchMessage(facts.serverVersion, facts.extensionVersion);
  return [
    { name: 'server', status: 'ok', detail: `${where}, version ${facts.serverVersion ?? 'unknown'}` },
    mismatch
      ? { name: 'version', status: 'warn', detail: mismatch }
      : { name: 'version', status: 'ok', detail: `the server and this extension are both ${facts.extensionVersion}` },
  ];
}

/** The server's checks from a `copilot.doctor` result; throws on a shape it does not know. */
export function doctorChecks(result: unknown): DoctorCheck[] {
  const checks = (result as { checks?: unknown } | null)?.checks;
  if (!Array.isArray(checks)) {
    throw new Error(`copilot.doctor answered without checks: ${JSON.stringify(result)}`);
  }
  return checks.map((c: Partial<DoctorCheck> & { editorDetail?: unknown }) => ({
    name: String(c.name ?? '?'),
    status: c.status === 'ok' || c.status === 'warn' || c.status === 'fail' ? c.status : 'fail',
    // A doctor that gives its advice in an editor's form too (`editorDetail`): that one.
    detail: String(typeof c.editorDetail === 'string' && c.editorDetail !== '' ? c.editorDetail : (c.detail ?? '')),
  }));
}

/** The server's settings as VS Code names them (the `copilot-ls.` settings). */
const SETTING_OF_VARIABLE: Record<string, string> = {
  COPILOT_LS_PROVIDER: 'copilot-ls.provider',
  COPILOT_LS_BASE_URL: 'copilot-ls.baseUrl',
  COPILOT_LS_MODEL: 'copilot-ls.model',
  COPILOT_LS_API_KEY_ENV: 'copilot-ls.apiKeyEnv',
  COPILOT_LS_EDITOR_MODEL: 'copilot-ls.editorModel',
  COPILOT_LS_MAX_STEPS: 'copilot-ls.maxSteps',
  COPILOT_LS_REQUEST_TIMEOUT_SECS: 'copilot-ls.requestTimeoutSecs',
};
const SETTING_NAMES = ['provider', 'baseUrl', 'model', 'apiKeyEnv', 'editorModel', 'maxSteps', 'requestTimeoutSecs'];

/**
 * A check's detail as VS Code's user acts on it: the doctor's advice names environment
 * variables and bare setting names, as a command line would (`set one of those keys, or
 * COPILOT_LS_PROVIDER with COPILOT_LS_BASE_URL`); here it names the `copilot-ls.`
 * settings. A variable in parentheses says where a value came from, and stays.
 */
export function editorDetail(detail: string): string {
  let out = detail.replace(
    /set one of those keys, or COPILOT_LS_PROVIDER with COPILOT_LS_BASE_URL for a local server/,
    "set one of those keys in VS Code's environment; or set copilot-ls.provider (editor: VS Code's own language models, no key needed; openai with copilot-ls.baseUrl for a local server), and copilot-ls.apiKeyEnv to the variable that holds a key",
  );
  out = out.replace(/(?<![(\w])(COPILOT_LS_[A-Z_]+)(?![)\w])/g, (whole, name: string) => SETTING_OF_VARIABLE[name] ?? whole);
  const names = SETTING_NAMES.join('|');
  return out.replace(new RegExp(`\\b(set|or|and) (${names})\\b(?!\\.)`, 'g'), (_, verb: string, name: string) => `${verb} copilot-ls.${name}`);
}

/** The checks with their advice in VS Code's words (`editorDetail`). */
export function forEditor(checks: DoctorCheck[]): DoctorCheck[] {
  return checks.map((c) => ({ ...c, detail: editorDetail(c.detail) }));
}

/** The checks of the model's setup: when one is not ok, Check Setup offers the settings. */
const MODEL_CHECKS = ['provider', 'apiKey', 'baseUrl', 'model', 'endpoint', 'editorModel', 'settings'];

/** The settings to open for the checks that are not ok, or undefined when all are. */
export function settingsToOpen(checks: DoctorCheck[]): string | undefined {
  const off = checks.filter((c) => c.status !== 'ok' && MODEL_CHECKS.includes(c.name));
  if (off.length === 0) {
    return undefined;
  }
  const named = off.map((c) => c.detail.match(/copilot-ls\.(\w+)/)?.[0]).filter((s): s is string => s !== undefined);
  return named.length === 1 ? named[0] : 'copilot-ls.';
}

const STATUS_WIDTH = 'fail'.length;

/** One line per check (`ok    name: detail`); a detail's further lines are indented under it. */
export function reportLines(checks: DoctorCheck[]): string[] {
  const indent = ' '.repeat(STATUS_WIDTH + 2);
  return checks.map((c) => {
    const [first, ...rest] = c.detail.trimEnd().split(/\r?\n/);
    return [`${c.status.padEnd(STATUS_WIDTH)}  ${c.name}: ${first}`, ...rest.map((l) => indent + l)].join('\n');
  });
}

/** `3 ok, 1 warn, 0 fail`. */
export function summary(checks: DoctorCheck[]): string {
  const count = (s: DoctorCheck['status']) => checks.filter((c) => c.status === s).length;
  return `${count('ok')} ok, ${count('warn')} warn, ${count('fail')} fail`;
}
