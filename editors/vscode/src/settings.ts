// Which of the user's `copilot-ls.*` settings reach the server, and when a change needs a
// restart. Pure: callers hand in VS Code's `inspect()` results.
//
// Only values the user actually set are sent. The defaults shown in the settings UI are
// the server's own defaults, and sending them would override the server's environment
// variables (COPILOT_LS_PROVIDER and friends), which PROTOCOL.md ranks below
// initializationOptions.
//
// The settings were called `copilot.*` before; that name read like GitHub Copilot's own
// in the Settings UI. A value the user set under the old name is still used when the new
// one is not set, and named so the extension can say it is deprecated.

/** The section the settings live in, and the one they had before. */
export const SECTION = 'copilot-ls';
export const OLD_SECTION = 'copilot';

/** The keys of PROTOCOL.md section 2 (and maxOutputTokens, history, editorModel), as named on the LSP side and under `copilot-ls.`. */
export const SERVER_SETTING_KEYS = [
  'provider',
  'baseUrl',
  'model',
  'apiKeyEnv',
  'maxSteps',
  'maxOutputTokens',
  'stream',
  'requestTimeoutSecs',
  'history',
  // PROTOCOL.md v5: the id of the editor's model (copilot-ls: Choose Model writes it).
  'editorModel',
] as const;

export type ServerSettingKey = (typeof SERVER_SETTING_KEYS)[number];
export type ServerSettings = Partial<Record<ServerSettingKey, string | number | boolean>>;

/** The part of `WorkspaceConfiguration.inspect()` that says what the user set. */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** Reads one key (`server.path`, `model`, ...) of a section. */
export type Inspect = (key: string) => Inspected | undefined;

const SCOPES = ['workspaceFolderValue', 'workspaceValue', 'globalValue'] as const;

function isSet(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

/** The most specific value the user set, or undefined; null and '' mean "unset". */
export function userValue(inspected: Inspected | undefined): unknown {
  return SCOPES.map((scope) => inspected?.[scope]).find(isSet);
}

/**
 * The value the user set for `key`: in the most specific scope that has one, under
 * `copilot-ls.` or else under the old `copilot.` (so a workspace that still says
 * `copilot.provider` overrides the user's `copilot-ls.provider`, as it did before the
 * rename). `legacy` collects the old keys used, for the deprecation note.
 */
export function settingValue(key: string, inspect: Inspect, inspectOld: Inspect | undefined, legacy?: Set<string>): unknown {
  const current = inspect(key);
  const old = inspectOld?.(key);
  for (const scope of SCOPES) {
    if (isSet(current?.[scope])) {
      return current?.[scope];
    }
    if (isSet(old?.[scope])) {
      legacy?.add(`${OLD_SECTION}.${key}`);
      return old?.[scope];
    }
  }
  return undefined;
}

/** The flat object sent as `initializationOptions` and as `settings["copilot-ls"]`. */
export function serverSettings(inspect: Inspect, inspectOld?: Inspect, legacy?: Set<string>): ServerSettings {
  const out: ServerSettings = {};
  for (const key of SERVER_SETTING_KEYS) {
    const v = settingValue(key, inspect, inspectOld, legacy);
    if (typeof v === 'string') {
      out[key] = v.trim();
    } else if (typeof v === 'number' || typeof v === 'boolean') {
      out[key] = v;
    }
  }
  return out;
}

/** The note for old keys still in use: which ones, and their new names. */
export function deprecationNote(legacy: Iterable<string>): string | undefined {
  const keys = [...legacy].sort();
  if (keys.length === 0) {
    return undefined;
  }
  const renamed = keys.map((k) => `${k} → ${SECTION}.${k.slice(OLD_SECTION.length + 1)}`).join(', ');
  return `copilot-ls: the settings under "${OLD_SECTION}." are deprecated and still read for now; rename them: ${renamed}.`;
}

export type SettingsChange =
  | { kind: 'none' }
  | { kind: 'notify'; settings: ServerSettings }
  | { kind: 'restart'; reason: string };

/**
 * What to do after the user edited settings. The server keeps the current value of a key
 * that is left out of `didChangeConfiguration`, so a key the user removed can only go
 * back to the server's default through a restart.
 */
export function settingsChange(previous: ServerSettings, next: ServerSettings): SettingsChange {
  const removed = SERVER_SETTING_KEYS.filter((k) => previous[k] !== undefined && next[k] === undefined);
  if (removed.length > 0) {
    return { kind: 'restart', reason: `reset of ${SECTION}.${removed.join(`, ${SECTION}.`)}` };
  }
  const changed = SERVER_SETTING_KEYS.some((k) => previous[k] !== next[k]);
  return changed ? { kind: 'notify', settings: next } : { kind: 'none' };
}
