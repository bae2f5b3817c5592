// What Check Setup shows: the extension's own checks (which server runs, whether its
// version is the extension's) followed by the server's `copilot.doctor` checks, one line
// each with ok, warn or fail. Pure, so the formatting is unit tested in plain Node.

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
  return checks.map((c: Partial<DoctorCheck>) => ({
    name: String(c.name ?? '?'),
    status: c.status === 'ok' || c.status === 'warn' || c.status === 'fail' ? c.status : 'fail',
    detail: String(c.detail ?? ''),
  }));
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
