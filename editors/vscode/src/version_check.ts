// Whether the server and this extension are the same version (the server's
// `serverInfo.version` from `initialize`, the extension's package.json `version`), and
// the warning that says which of the two to update when they are not. Pure.

interface Version {
  core: [number, number, number];
  /** The pre-release part (`0.4.0-rc.1` → `rc.1`); empty for a release. */
  pre: string;
}

function parse(version: string): Version | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(version.trim());
  return m ? { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ?? '' } : undefined;
}

function comparePre(a: string, b: string): number {
  // A release is newer than any of its pre-releases.
  if (a === b) {
    return 0;
  }
  if (a === '') {
    return 1;
  }
  if (b === '') {
    return -1;
  }
  const as = a.split('.');
  const bs = b.split('.');
  for (let i = 0; i < Math.max(as.length, bs.length); i++) {
    if (as[i] === undefined) {
      return -1;
    }
    if (bs[i] === undefined) {
      return 1;
    }
    const an = /^\d+$/.test(as[i]) ? Number(as[i]) : undefined;
    const bn = /^\d+$/.test(bs[i]) ? Number(bs[i]) : undefined;
    if (an !== undefined && bn !== undefined) {
      if (an !== bn) {
        return an < bn ? -1 : 1;
      }
    } else if (an !== undefined || bn !== undefined) {
      // Numeric identifiers sort before alphanumeric ones (semver).
      return an !== undefined ? -1 : 1;
    } else if (as[i] !== bs[i]) {
      return as[i] < bs[i] ? -1 : 1;
    }
  }
  return 0;
}

/** Semver order of two versions: negative, 0 or positive; undefined if one does not parse. */
export function compareVersions(a: string, b: string): number | undefined {
  const va = parse(a);
  const vb = parse(b);
  if (!va || !vb) {
    return undefined;
  }
  for (let i = 0; i < 3; i++) {
    if (va.core[i] !== vb.core[i]) {
      return va.core[i] - vb.core[i];
    }
  }
  return comparePre(va.pre, vb.pre);
}

/**
 * The warning for a server whose version is not the extension's, or undefined when they
 * agree. `serverVersion` is undefined for a server that sends no `serverInfo.version`
 * (copilot-ls before 0.4.0).
 */
export function versionMismatchMessage(serverVersion: string | undefined, extensionVersion: string): string | undefined {
  if (serverVersion === undefined || serverVersion.trim() === '') {
    return `copilot-ls server reports no version, so it is older than this extension ${extensionVersion}: update the server`;
  }
  const order = compareVersions(serverVersion, extensionVersion);
  if (order === 0) {
    return undefined;
  }
  if (order === undefined) {
    return serverVersion === extensionVersion
      ? undefined
      : `copilot-ls server ${serverVersion} is not this extension's version ${extensionVersion}: update the one that is behind`;
  }
  return order < 0
    ? `copilot-ls server ${serverVersion} is older than this extension ${extensionVersion}: update the server`
    : `copilot-ls server ${serverVersion} is newer than this extension ${extensionVersion}: update the extension`;
}
