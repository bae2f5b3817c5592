import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bundledServerPath, expandHome, findServer, type DiscoveryInput } from '../../src/discovery';

function input(existing: string[], overrides: Partial<DiscoveryInput> = {}): DiscoveryInput {
  return {
    env: { PATH: '/usr/local/bin:/usr/bin', HOME: '/home/me' },
    settingPath: null,
    extensionPath: '/ext',
    platform: 'linux',
    isExecutable: (f) => existing.includes(f),
    ...overrides,
  };
}

describe('findServer', () => {
  const all = ['/env/copilot-ls', '/setting/copilot-ls', '/ext/server/copilot-ls', '/usr/bin/copilot-ls'];

  it('prefers COPILOT_LS_PATH over everything', () => {
    const r = findServer(input(all, { env: { COPILOT_LS_PATH: '/env/copilot-ls', PATH: '/usr/bin' }, settingPath: '/setting/copilot-ls' }));
    assert.deepEqual(r, { ok: true, path: '/env/copilot-ls', source: 'COPILOT_LS_PATH' });
  });

  it('then the copilot-ls.server.path setting', () => {
    const r = findServer(input(all, { settingPath: '/setting/copilot-ls' }));
    assert.deepEqual(r, { ok: true, path: '/setting/copilot-ls', source: 'copilot-ls.server.path' });
  });

  it('then the binary bundled in the extension', () => {
    assert.deepEqual(findServer(input(all)), { ok: true, path: '/ext/server/copilot-ls', source: 'bundled' });
  });

  it('then the first copilot-ls on PATH', () => {
    const r = findServer(input(['/usr/bin/copilot-ls', '/usr/local/bin/copilot-ls']));
    assert.deepEqual(r, { ok: true, path: '/usr/local/bin/copilot-ls', source: 'PATH' });
  });

  it('ignores empty and blank overrides', () => {
    const r = findServer(input(all, { env: { COPILOT_LS_PATH: '', PATH: '' }, settingPath: '   ' }));
    assert.equal(r.ok && r.source, 'bundled');
  });

  it('reports a broken explicit path instead of falling back', () => {
    const r = findServer(input(all, { settingPath: '/nope/copilot-ls' }));
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.message : '', /copilot-ls\.server\.path points to \/nope\/copilot-ls/);
    const e = findServer(input(all, { env: { COPILOT_LS_PATH: '/gone' } }));
    assert.match(!e.ok ? e.message : '', /COPILOT_LS_PATH points to \/gone/);
  });

  it('says how to fix it when nothing is found', () => {
    const r = findServer(input([]));
    assert.equal(r.ok, false);
    const message = !r.ok ? r.message : '';
    assert.match(message, /not found/);
    assert.match(message, /copilot-ls\.server\.path/);
    assert.match(message, /PATH/);
    assert.match(message, /COPILOT_LS_PATH/);
    // A notification is plain text: markdown backticks would show literally.
    assert.doesNotMatch(message, /`/);
  });

  it('expands ~ in explicit paths', () => {
    const r = findServer(input(['/home/me/bin/copilot-ls'], { settingPath: '~/bin/copilot-ls' }));
    assert.deepEqual(r, { ok: true, path: '/home/me/bin/copilot-ls', source: 'copilot-ls.server.path' });
    assert.equal(expandHome('/abs/~x', { HOME: '/h' }), '/abs/~x');
  });

  it('uses .exe and ; on Windows', () => {
    assert.equal(bundledServerPath('C:\\ext', 'win32'), 'C:\\ext\\server\\copilot-ls.exe');
    const r = findServer(input(['C:\\tools\\copilot-ls.exe'], { platform: 'win32', extensionPath: 'C:\\ext', env: { PATH: 'C:\\bin;C:\\tools' } }));
    assert.deepEqual(r, { ok: true, path: 'C:\\tools\\copilot-ls.exe', source: 'PATH' });
  });
});
