// The version check (version_check.ts) and Check Setup's report (setup_report.ts): which
// side the warning tells to update, and how the checks read, one line each.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { doctorChecks, extensionChecks, reportLines, summary, type ServerFacts } from '../../src/setup_report';
import { compareVersions, versionMismatchMessage } from '../../src/version_check';

describe('versionMismatchMessage', () => {
  it('says nothing when the server is the extension\'s version', () => {
    assert.equal(versionMismatchMessage('0.4.0', '0.4.0'), undefined);
    assert.equal(versionMismatchMessage('0.4.0+abc', '0.4.0'), undefined, 'build metadata does not count');
  });

  it('tells to update the server when it is older', () => {
    assert.equal(versionMismatchMessage('0.3.0', '0.4.0'), 'copilot-ls server 0.3.0 is older than this extension 0.4.0: update the server');
    assert.equal(versionMismatchMessage('0.4.0-rc.1', '0.4.0'), 'copilot-ls server 0.4.0-rc.1 is older than this extension 0.4.0: update the server');
  });

  it('tells to update the extension when the server is newer', () => {
    assert.equal(versionMismatchMessage('0.5.0', '0.4.0'), 'copilot-ls server 0.5.0 is newer than this extension 0.4.0: update the extension');
    assert.equal(versionMismatchMessage('0.4.1', '0.4.0'), 'copilot-ls server 0.4.1 is newer than this extension 0.4.0: update the extension');
  });

  it('takes a server that sends no version for an old one', () => {
    assert.equal(versionMismatchMessage(undefined, '0.4.0'), 'copilot-ls server reports no version, so it is older than this extension 0.4.0: update the server');
    assert.equal(versionMismatchMessage('', '0.4.0'), 'copilot-ls server reports no version, so it is older than this extension 0.4.0: update the server');
  });

  it('does not guess an order for a version it cannot read', () => {
    assert.match(versionMismatchMessage('nightly', '0.4.0') ?? '', /^copilot-ls server nightly is not this extension's version 0\.4\.0/);
  });
});

describe('compareVersions', () => {
  it('orders by number, not by text, and pre-releases before their release', () => {
    assert.ok(compareVersions('0.10.0', '0.9.0')! > 0);
    assert.ok(compareVersions('1.0.0', '0.99.99')! > 0);
    assert.ok(compareVersions('0.4.0-alpha', '0.4.0-beta')! < 0);
    assert.ok(compareVersions('0.4.0-rc.2', '0.4.0-rc.10')! < 0);
    assert.ok(compareVersions('0.4.0-1', '0.4.0-rc')! < 0);
    assert.equal(compareVersions('v0.4.0', '0.4.0'), 0);
    assert.equal(compareVersions('0.4', '0.4.0'), undefined);
  });
});

describe('Check Setup report', () => {
  const facts = (over: Partial<ServerFacts> = {}): ServerFacts => ({
    binary: { path: '/ext/server/copilot-ls', source: 'bundled' },
    running: true,
    serverVersion: '0.4.0',
    commands: ['copilot.ask', 'copilot.doctor'],
    extensionVersion: '0.4.0',
    ...over,
  });

  it('starts with the server the extension runs and whether the versions agree', () => {
    assert.deepEqual(extensionChecks(facts()), [
      { name: 'server', status: 'ok', detail: '/ext/server/copilot-ls (from bundled), version 0.4.0' },
      { name: 'version', status: 'ok', detail: 'the server and this extension are both 0.4.0' },
    ]);
    assert.deepEqual(extensionChecks(facts({ serverVersion: '0.3.0' }))[1], {
      name: 'version',
      status: 'warn',
      detail: 'copilot-ls server 0.3.0 is older than this extension 0.4.0: update the server',
    });
  });

  it('fails the server check when there is no binary or it does not run', () => {
    assert.deepEqual(extensionChecks(facts({ binary: { error: 'not found' }, running: false })), [{ name: 'server', status: 'fail', detail: 'not found' }]);
    const [check] = extensionChecks(facts({ running: false }));
    assert.equal(check.status, 'fail');
    assert.match(check.detail, /is not running/);
  });

  it('reads the server\'s checks, taking an unknown status for a failure', () => {
    const result = { checks: [{ name: 'provider', status: 'warn', detail: 'none' }, { name: 'cache', status: 'broken', detail: 'x' }] };
    assert.deepEqual(doctorChecks(result), [
      { name: 'provider', status: 'warn', detail: 'none' },
      { name: 'cache', status: 'fail', detail: 'x' },
    ]);
    assert.throws(() => doctorChecks({ nope: 1 }), /without checks/);
  });

  it('writes one line per check with its status, and counts them', () => {
    const checks = [
      { name: 'provider', status: 'warn' as const, detail: 'no provider: answers list places' },
      { name: 'cache', status: 'ok' as const, detail: '/tmp/cache is writable' },
      { name: 'endpoint', status: 'fail' as const, detail: 'cannot connect\nstart the server' },
    ];
    assert.deepEqual(reportLines(checks), [
      'warn  provider: no provider: answers list places',
      'ok    cache: /tmp/cache is writable',
      'fail  endpoint: cannot connect\n      start the server',
    ]);
    assert.equal(summary(checks), '1 ok, 1 warn, 1 fail');
  });
});
