import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResponseError } from 'vscode-languageserver-protocol';
import { describeAskError, settingForFailure } from '../../src/errors';

describe('describeAskError', () => {
  it('stays quiet on a cancelled ask (-32800)', () => {
    assert.deepEqual(describeAskError(new ResponseError(-32800, 'Request cancelled')), { kind: 'silent' });
  });

  it('shows RequestFailed with a button that opens the setting to fix', () => {
    const r = describeAskError(new ResponseError(-32803, 'provider returned 401 Unauthorized: invalid api key'));
    assert.deepEqual(r, {
      kind: 'error',
      message: 'copilot-ls: provider returned 401 Unauthorized: invalid api key',
      actions: [{ label: 'Open Settings', command: 'workbench.action.openSettings', args: ['copilot-ls.apiKeyEnv'] }],
    });
  });

  it('points an old server at copilot-ls.server.path', () => {
    const r = describeAskError(new ResponseError(-32601, 'Method not found'));
    assert.equal(r.kind === 'error' && r.actions[0].args[0], 'copilot-ls.server.path');
  });

  it('offers a restart when the server is not running', () => {
    const r = describeAskError({ code: -32095, message: 'Client is not running' });
    assert.deepEqual(r.kind === 'error' && r.actions.map((a) => a.command), ['copilot-ls.restartServer', 'workbench.action.openSettings']);
  });

  it('shows anything else with the copilot settings', () => {
    const r = describeAskError(new Error('boom'));
    assert.equal(r.kind === 'error' && r.message, 'copilot-ls: boom');
    assert.equal(r.kind === 'error' && r.actions[0].args[0], 'copilot-ls.');
  });
});

describe('settingForFailure', () => {
  const cases: Array<[string, string]> = [
    ['provider returned 401 Unauthorized', 'copilot-ls.apiKeyEnv'],
    ['provider returned 403 Forbidden', 'copilot-ls.apiKeyEnv'],
    ['cannot connect to http://127.0.0.1:9/v1: connection refused', 'copilot-ls.baseUrl'],
    ['provider call timed out after 120 s', 'copilot-ls.requestTimeoutSecs'],
    ['provider did not answer within 120 s (http://127.0.0.1:8080/v1)', 'copilot-ls.requestTimeoutSecs'],
    ['provider returned 404: model `gpt-9` does not exist', 'copilot-ls.model'],
    ['provider returned 500 Internal Server Error', 'copilot-ls.'],
  ];
  for (const [message, setting] of cases) {
    it(`${message} -> ${setting}`, () => assert.equal(settingForFailure(message), setting));
  }
});
