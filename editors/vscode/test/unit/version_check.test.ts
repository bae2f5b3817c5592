// The version check (version_check.ts) and Check Setup's report (setup_report.ts): which
// side the warning tells to update, and how the checks read, one line each.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { doctorChecks, editorDetail, extensionChecks, forEditor, reportLines, settingsToOpen, summary, type ServerFacts } from '../../src/setup_report';
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

// Issue #55 item 10: Check Setup in VS Code gave the command line's advice (environment
// variables); in the editor it names the copilot-ls settings and offers to open them.
describe('Check Setup\'s advice in VS Code', () => {
  // The server's doctor (session/doctor.rs), word for word.
  const NONE =
    "none: no provider is set and neither OPENAI_API_KEY nor ANTHROPIC_API_KEY is; answers list the places copilot-ls's own search finds. To have a model answer, set one of those keys, or COPILOT_LS_PROVIDER with COPILOT_LS_BASE_URL for a local server";

  it('names the settings, not the environment variables', () => {
    const said = editorDetail(NONE);
    assert.doesNotMatch(said, /COPILOT_LS_/);
    assert.match(said, /copilot-ls\.provider/);
    assert.match(said, /copilot-ls\.baseUrl/);
    assert.match(said, /copilot-ls\.apiKeyEnv/);
    assert.match(said, /editor: VS Code's own language models/);
    assert.equal(
      editorDetail('OPENAI_API_KEY is not set: export it with your key, or set apiKeyEnv to the variable that holds it'),
      'OPENAI_API_KEY is not set: export it with your key, or set copilot-ls.apiKeyEnv to the variable that holds it',
    );
    assert.match(editorDetail('none (settings): answers list the places; set provider to openai or anthropic to have a model answer'), /set copilot-ls\.provider to openai/);
    assert.match(editorDetail('http://h/v1 answers, but m is not among its models (a, b): set model to one of them'), /set copilot-ls\.model to one of them/);
  });

  it('takes the doctor\'s editor form of its advice when it gives one, in settings\' names', () => {
    const [check] = forEditor(doctorChecks({ checks: [{ name: 'provider', status: 'warn', detail: 'export COPILOT_LS_PROVIDER=openai', editorDetail: 'set provider to openai' }] }));
    assert.equal(check.detail, 'set copilot-ls.provider to openai');
  });

  it('keeps where a value came from', () => {
    assert.equal(editorDetail('http://127.0.0.1:1/v1 (COPILOT_LS_BASE_URL)'), 'http://127.0.0.1:1/v1 (COPILOT_LS_BASE_URL)');
  });

  it('offers the settings when the model\'s setup is not ok', () => {
    const checks = forEditor([
      { name: 'server', status: 'ok', detail: 'x' },
      { name: 'provider', status: 'warn', detail: NONE },
      { name: 'cache', status: 'warn', detail: 'set COPILOT_LS_CACHE_DIR' },
    ]);
    assert.equal(settingsToOpen(checks), 'copilot-ls.provider');
    assert.equal(settingsToOpen([...checks, { name: 'apiKey', status: 'fail', detail: 'or set copilot-ls.apiKeyEnv' }]), 'copilot-ls.');
    assert.equal(settingsToOpen([{ name: 'apiKey', status: 'fail', detail: editorDetail('K is not set: or set apiKeyEnv to it') }]), 'copilot-ls.apiKeyEnv');
    assert.equal(settingsToOpen([{ name: 'provider', status: 'ok', detail: 'openai' }, checks[2]]), undefined);
  });
});
