// Which of the user's `copilot.*` settings reach the server, and when a change needs a
// restart. Pure: callers hand in VS Code's `inspect()` results.
//
// Only values the user actually set are sent. The defaults shown in the settings UI are
// the server's own defaults, and sending them would override the server's environment
// variables (COPILOT_LS_PROVIDER and friends), which PROTOCOL.md ranks below
// initializationOptions.

/** The keys of PROTOCOL.md section 2 (and maxOutputTokens), as named on the LSP side and under `copilot.`. */
export const SERVER_SETTING_KEYS = [
  'provider',
  'baseUrl',
  'model',
  'apiKeyEnv',
  'maxSteps',
  'maxOutputTokens',
  'stream',
  'requestTimeoutSecs',
] as const;

export type ServerSettingKey = (typeof SERVER_SETTING_KEYS)[number];
export type ServerSettings = Partial<Record<ServerSettingKey, string | number | boolean>>;

/** The part of `WorkspaceConfiguration.inspect()` that says what the user set. */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** The most specific value the user set, or undefined; null and '' mean "unset". */
export function userValue(inspected: Inspected | undefined): unknown {
  if (!inspected) {
    return undefined;
  }
  for (const v of [inspected.workspaceFolderValue, inspected.workspaceValue, inspected.globalValue]) {
    if (v !== undefined && v !== null && v !== '') {
      return v;
    }
  }
  return undefined;
}

/** The flat object sent as `initializationOptions` and as `settings.copilot`. */
export function serverSettings(inspect: (key: ServerSettingKey) => Inspected | undefined): ServerSettings {
  const out: ServerSettings = {};
  for (const key of SERVER_SETTING_KEYS) {
    const v = userValue(inspect(key));
    if (typeof v === 'string') {
      out[key] = v.trim();
    } else if (typeof v === 'number' || typeof v === 'boolean') {
      out[key] = v;
    }
  }
  return out;
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
    return { kind: 'restart', reason: `reset of copilot.${removed.join(', copilot.')}` };
  }
  const changed = SERVER_SETTING_KEYS.some((k) => previous[k] !== next[k]);
  return changed ? { kind: 'notify', settings: next } : { kind: 'none' };
}
