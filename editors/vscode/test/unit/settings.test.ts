import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SERVER_SETTING_KEYS, deprecationNote, serverSettings, settingValue, settingsChange, userValue, type Inspected } from '../../src/settings';

describe('serverSettings', () => {
  it('sends only the keys the user set, under their LSP names', () => {
    const inspected: Record<string, Inspected> = {
      provider: { globalValue: 'openai' },
      baseUrl: { workspaceValue: 'http://127.0.0.1:8080/v1' },
      model: {},
      maxSteps: { globalValue: 4 },
      stream: { workspaceFolderValue: false },
    };
    assert.deepEqual(serverSettings((k) => inspected[k]), {
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:8080/v1',
      maxSteps: 4,
      stream: false,
    });
  });

  it('sends nothing when nothing is set, so the server environment still counts', () => {
    assert.deepEqual(serverSettings(() => undefined), {});
  });

  it('takes the most specific scope', () => {
    assert.equal(userValue({ globalValue: 1, workspaceValue: 2, workspaceFolderValue: 3 }), 3);
    assert.equal(userValue({ globalValue: 1, workspaceValue: 2 }), 2);
  });

  it('treats null and empty strings as unset and trims strings', () => {
    assert.equal(userValue({ globalValue: null }), undefined);
    assert.equal(userValue({ workspaceValue: '', globalValue: 'anthropic' }), 'anthropic');
    assert.deepEqual(serverSettings((k) => (k === 'model' ? { globalValue: ' fake ' } : undefined)), { model: 'fake' });
  });

  it('covers every key of PROTOCOL.md section 2', () => {
    assert.deepEqual([...SERVER_SETTING_KEYS], ['provider', 'baseUrl', 'model', 'apiKeyEnv', 'maxSteps', 'maxOutputTokens', 'stream', 'requestTimeoutSecs', 'history', 'editorModel']);
  });
});

describe('settingsChange', () => {
  it('does nothing when the values are the same', () => {
    assert.deepEqual(settingsChange({ model: 'a' }, { model: 'a' }), { kind: 'none' });
  });

  it('notifies the server of changed and added keys', () => {
    assert.deepEqual(settingsChange({ model: 'a' }, { model: 'b', maxSteps: 3 }), {
      kind: 'notify',
      settings: { model: 'b', maxSteps: 3 },
    });
  });

  it('restarts when a key was reset, since the server keeps omitted keys', () => {
    const change = settingsChange({ model: 'a', baseUrl: 'x' }, { model: 'a' });
    assert.equal(change.kind, 'restart');
    assert.match(change.kind === 'restart' ? change.reason : '', /copilot-ls\.baseUrl/);
  });
});

describe('the settings\' old names', () => {
  it('reads an old copilot.* value the new name does not set, and says which', () => {
    const current: Record<string, Inspected> = { model: { globalValue: 'new-model' } };
    const old: Record<string, Inspected> = { model: { globalValue: 'old-model' }, provider: { workspaceValue: 'none' } };
    const legacy = new Set<string>();
    assert.deepEqual(
      serverSettings((k) => current[k], (k) => old[k], legacy),
      { model: 'new-model', provider: 'none' },
    );
    assert.deepEqual([...legacy], ['copilot.provider']);
    assert.equal(settingValue('server.path', () => undefined, () => ({ globalValue: '/x' }), legacy), '/x');
    assert.deepEqual([...legacy].sort(), ['copilot.provider', 'copilot.server.path']);
    // The most specific scope wins, whichever name it uses.
    assert.equal(settingValue('model', () => ({ globalValue: 'user' }), () => ({ workspaceValue: 'workspace' })), 'workspace');
    assert.equal(settingValue('model', () => ({ workspaceValue: 'new' }), () => ({ workspaceValue: 'old' })), 'new');
  });

  it('names each old key with its new name in the deprecation note', () => {
    assert.equal(deprecationNote([]), undefined);
    const note = deprecationNote(['copilot.provider', 'copilot.server.path']) ?? '';
    assert.match(note, /copilot\.provider → copilot-ls\.provider/);
    assert.match(note, /copilot\.server\.path → copilot-ls\.server\.path/);
    assert.match(note, /deprecated/);
  });
});
