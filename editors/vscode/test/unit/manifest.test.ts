// Checks package.json against what the extension code and PROTOCOL.md expect: a
// mismatch here shows up only at run time in VS Code otherwise.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { OLD_COMMAND_IDS } from '../../src/command_ids';
import { SERVER_SETTING_KEYS } from '../../src/settings';

// Compiled to out/test/unit; the sources sit two levels up from out/.
const root = path.resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const sources = readdirSync(path.join(root, 'src'))
  .map((f) => readFileSync(path.join(root, 'src', f), 'utf8'))
  .join('\n');

describe('package.json', () => {
  const commands: Array<{ command: string; title: string; category: string }> = manifest.contributes.commands;

  it('contributes the palette commands of the issue', () => {
    const titles = commands.map((c) => `${c.category}: ${c.title}`);
    for (const t of ['copilot-ls: Ask', 'copilot-ls: Ask About Selection', 'copilot-ls: Follow Up', 'copilot-ls: Clear Answers', 'copilot-ls: Show Last Answer', 'copilot-ls: Go to Citation', 'copilot-ls: Check Setup', 'copilot-ls: Choose Model']) {
      assert.ok(titles.includes(t), t);
    }
  });

  it('names itself copilot-ls, never just Copilot, in everything the user reads', () => {
    assert.equal(manifest.displayName, 'copilot-ls');
    assert.equal(manifest.contributes.configuration.title, 'copilot-ls');
    assert.ok(commands.every((c) => c.category === 'copilot-ls'));
    // VS Code capitalizes a view's name word by word ("Copilot-Ls"): the product's name
    // goes into the view's description, which it leaves alone.
    assert.equal(manifest.contributes.views.explorer[0].name, 'Citations');
    assert.ok(sources.includes("view.description = 'copilot-ls'"));
    // Every setting and command is named copilot-ls.*, bar the deprecated old settings.
    const props = manifest.contributes.configuration.properties;
    for (const [key, schema] of Object.entries<{ markdownDeprecationMessage?: string }>(props)) {
      assert.ok(key.startsWith('copilot-ls.') || (key.startsWith('copilot.') && schema.markdownDeprecationMessage), key);
    }
    assert.ok(commands.every((c) => c.command.startsWith('copilot-ls.')));
    // Strings shown to the user in the sources: no "Copilot" on its own.
    const shown = sources.match(/(['`"])Copilot\b(?!-ls)[^'`"]*\1/g) ?? [];
    assert.deepEqual(shown, []);
  });

  it('keeps the old names working: deprecated settings, and the old command ids', () => {
    const props = manifest.contributes.configuration.properties;
    // editorModel came after the rename: it never had an old name.
    for (const key of [...SERVER_SETTING_KEYS.filter((k) => k !== 'editorModel'), 'server.path']) {
      assert.match(props[`copilot.${key}`].markdownDeprecationMessage, new RegExp(`#copilot-ls\\.${key.replace('.', '\\.')}#`), key);
      assert.equal(props[`copilot.${key}`].type, props[`copilot-ls.${key}`].type, key);
    }
    for (const [old, id] of Object.entries(OLD_COMMAND_IDS)) {
      assert.ok(commands.some((c) => c.command === id), id);
      assert.equal(commands.some((c) => c.command === old), false, old);
    }
  });

  it('registers every contributed command in code, and none the server owns', () => {
    for (const c of commands) {
      assert.ok(sources.includes(`'${c.command}'`), c.command);
    }
    // vscode-languageclient registers the server's executeCommand names itself; a
    // second registration of the same id fails at activation.
    for (const owned of ['copilot.ask', 'copilot.clear', 'copilot.doctor']) {
      assert.equal(commands.some((c) => c.command === owned), false, owned);
    }
  });

  it('binds Ask to ctrl+alt+/ and cmd+alt+/', () => {
    assert.deepEqual(manifest.contributes.keybindings.find((k: { command: string }) => k.command === 'copilot-ls.ask'), {
      command: 'copilot-ls.ask',
      key: 'ctrl+alt+/',
      mac: 'cmd+alt+/',
    });
  });

  it('has a setting for every server key, plus server.path and trace.server', () => {
    const props = Object.keys(manifest.contributes.configuration.properties);
    for (const key of [...SERVER_SETTING_KEYS.map((k) => `copilot-ls.${k}`), 'copilot-ls.server.path', 'copilot-ls.trace.server']) {
      assert.ok(props.includes(key), key);
    }
  });

  it('has plain string settings with an empty default where the server has its own', () => {
    const props = manifest.contributes.configuration.properties;
    for (const key of ['copilot-ls.baseUrl', 'copilot-ls.model', 'copilot-ls.apiKeyEnv', 'copilot-ls.server.path', 'copilot-ls.provider', 'copilot-ls.editorModel']) {
      assert.equal(props[key].type, 'string', key);
      assert.equal(props[key].default, '', key);
    }
    assert.deepEqual(props['copilot-ls.provider'].enum, ['', 'openai', 'anthropic', 'editor', 'none']);
    assert.equal(props['copilot-ls.provider'].markdownEnumDescriptions.length, props['copilot-ls.provider'].enum.length);
    assert.deepEqual(
      { type: props['copilot-ls.maxOutputTokens'].type, default: props['copilot-ls.maxOutputTokens'].default },
      { type: 'integer', default: 4096 },
    );
  });

  it('scopes server.path so a remote window can set it, and an untrusted workspace cannot', () => {
    // machine and machine-overridable settings are left out of the User settings of a
    // remote window (code-server is one): the Settings UI does not list them there and
    // Open Settings found nothing. window scope applies from User, Remote and Workspace.
    assert.equal(manifest.contributes.configuration.properties['copilot-ls.server.path'].scope, 'window');
    assert.equal(manifest.contributes.configuration.properties['copilot.server.path'].scope, 'window');
    assert.deepEqual(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations, ['copilot-ls.server.path', 'copilot.server.path']);
  });

  it('is the version of the server it ships with, under the server\'s licenses', () => {
    // scripts/package.sh refuses to package two versions together; the version check
    // (version_check.ts) compares the server's serverInfo.version with this one.
    const cargo = readFileSync(path.join(root, '..', '..', 'Cargo.toml'), 'utf8');
    const workspaceVersion = /\[workspace\.package\][^[]*?\nversion = "([^"]+)"/.exec(cargo)?.[1];
    assert.equal(manifest.version, workspaceVersion);
    assert.equal(manifest.license, /\nlicense = "([^"]+)"/.exec(cargo)?.[1]);
    const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
    assert.equal(lock.version, manifest.version);
    assert.equal(lock.packages[''].version, manifest.version);
  });

  it('packages the bundled server and the notices (.vscodeignore)', () => {
    const kept = readFileSync(path.join(root, '.vscodeignore'), 'utf8').split('\n');
    for (const f of ['dist/extension.js', 'server/copilot-ls', 'server/copilot-ls.exe', 'LICENSE-MIT', 'LICENSE-APACHE', 'THIRD-PARTY-NOTICES.md']) {
      assert.ok(kept.includes(`!${f}`), f);
    }
  });

  it('contributes the chat participant the code creates, and needs a VS Code with tool calling in its language model API', () => {
    assert.deepEqual(
      manifest.contributes.chatParticipants.map((p: { id: string; name: string }) => [p.id, p.name]),
      [['copilot-ls.chat', 'copilot-ls']],
    );
    assert.ok(sources.includes("export const CHAT_PARTICIPANT_ID = 'copilot-ls.chat'"));
    // LanguageModelToolCallPart and ChatRequest.model came in 1.95; vsce wants @types/vscode no newer than engines.
    assert.equal(manifest.engines.vscode, '^1.95.0');
    assert.equal(manifest.devDependencies['@types/vscode'], '1.95.0');
  });

  it('contributes the citation view the code creates', () => {
    assert.equal(manifest.contributes.views.explorer[0].id, 'copilot-ls.citations');
    assert.ok(sources.includes("createTreeView('copilot-ls.citations'"));
  });
});
