// Where the copilot-ls binary comes from, in rust-analyzer's order: an explicit override
// (env, then setting) wins, then the binary bundled in the extension, then PATH.
// Pure: the file system is reached only through `isExecutable`, so tests pass a fake.

import * as path from 'node:path';

export type ServerSource = 'COPILOT_LS_PATH' | 'copilot-ls.server.path' | 'bundled' | 'PATH';

export interface DiscoveryInput {
  env: Readonly<Record<string, string | undefined>>;
  /** Value of the `copilot-ls.server.path` setting (null/empty when unset). */
  settingPath: string | null | undefined;
  /** The extension's install folder (`context.extensionPath`). */
  extensionPath: string;
  platform: NodeJS.Platform;
  isExecutable(file: string): boolean;
}

export type Discovery =
  | { ok: true; path: string; source: ServerSource }
  | { ok: false; message: string };

export function binaryName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'copilot-ls.exe' : 'copilot-ls';
}

/** Where `vsce package` puts a bundled server: `server/copilot-ls` in the extension. */
export function bundledServerPath(extensionPath: string, platform: NodeJS.Platform): string {
  const p = platform === 'win32' ? path.win32 : path.posix;
  return p.join(extensionPath, 'server', binaryName(platform));
}

/** Expands a leading `~` the way a shell would, because people paste paths from one. */
export function expandHome(file: string, env: DiscoveryInput['env']): string {
  const home = env.HOME ?? env.USERPROFILE;
  if (home && (file === '~' || file.startsWith('~/') || file.startsWith('~\\'))) {
    return home + file.slice(1);
  }
  return file;
}

export function findServer(input: DiscoveryInput): Discovery {
  const { env, platform, isExecutable } = input;

  // An explicit path that does not work is an error, not a reason to fall through: the
  // user asked for that binary and silently running another one would hide the mistake.
  const explicit: Array<[ServerSource, string | null | undefined]> = [
    ['COPILOT_LS_PATH', env.COPILOT_LS_PATH],
    ['copilot-ls.server.path', input.settingPath],
  ];
  for (const [source, raw] of explicit) {
    const value = raw?.trim();
    if (!value) {
      continue;
    }
    const file = expandHome(value, env);
    if (isExecutable(file)) {
      return { ok: true, path: file, source };
    }
    const where = source === 'COPILOT_LS_PATH' ? 'The environment variable COPILOT_LS_PATH' : 'The setting copilot-ls.server.path';
    return {
      ok: false,
      message: `${where} points to ${file}, which is not an executable file. Fix the path (or clear it to use the bundled server or copilot-ls on PATH).`,
    };
  }

  const bundled = bundledServerPath(input.extensionPath, platform);
  if (isExecutable(bundled)) {
    return { ok: true, path: bundled, source: 'bundled' };
  }

  const onPath = searchPath(binaryName(platform), env, platform, isExecutable);
  if (onPath) {
    return { ok: true, path: onPath, source: 'PATH' };
  }

  return {
    ok: false,
    message:
      'The copilot-ls server was not found: not in the extension, not on PATH. ' +
      // Notifications are plain text: no backticks or other markdown.
      'Build it ("cargo build --release" in the copilot-ls repository) and set copilot-ls.server.path to its target/release/copilot-ls, ' +
      'or put copilot-ls on PATH, or set COPILOT_LS_PATH.',
  };
}

function searchPath(
  name: string,
  env: DiscoveryInput['env'],
  platform: NodeJS.Platform,
  isExecutable: (file: string) => boolean,
): string | undefined {
  const p = platform === 'win32' ? path.win32 : path.posix;
  const pathVar = env.PATH ?? env.Path ?? '';
  for (const dir of pathVar.split(p.delimiter)) {
    if (!dir) {
      continue;
    }
    const candidate = p.join(dir, name);
    if (isExecutable(candidate)) {
      return candidate;
    }
  }
  return undefined;
}
