// Test only (never shipped): a language model provider whose model answers with the
// replies of a script, chosen by the question: the Chat view may ask the default model
// things of its own (a title), so replies are not taken in order. The end-to-end test installs it in its own code-server profile, so that
// copilot-ls's extension, with no key and no provider set, answers through VS Code's
// language model API (`vscode.lm`). Each request it gets is written as one JSON line to
// $LM_PROVIDER_RECORD: the model, the messages (role and parts) and the tools' names.
//
// $LM_PROVIDER_SCRIPT names a JSON file {"conversations": [{"when": "words of the
// question", "turns": [{"text"?, "tool_calls"?: [{id, name, arguments}], "error"?}]}]}. A
// request whose last user text contains `when` gets the turn numbered by the assistant
// messages after that text (0 for the question itself, 1 after the first tool results);
// any other request gets "(no scripted reply)".
'use strict';

const fs = require('node:fs');
const vscode = require('vscode');

const MODEL = {
  id: 'copilot-ls-test-model',
  name: 'copilot-ls Test Model',
  family: 'scripted',
  version: '1',
  maxInputTokens: 100000,
  maxOutputTokens: 4000,
  tooltip: 'Scripted replies for the copilot-ls end-to-end test',
  capabilities: { toolCalling: true, imageInput: false },
};

function describePart(part) {
  if (part instanceof vscode.LanguageModelTextPart) return { text: part.value };
  if (part instanceof vscode.LanguageModelToolCallPart) return { toolCall: { callId: part.callId, name: part.name, input: part.input } };
  if (part instanceof vscode.LanguageModelToolResultPart) {
    return { toolResult: { callId: part.callId, content: part.content.map((c) => (c instanceof vscode.LanguageModelTextPart ? c.value : String(c))).join('') } };
  }
  return { other: String(part && part.constructor && part.constructor.name) };
}

function activate(context) {
  const scriptFile = process.env.LM_PROVIDER_SCRIPT;
  const record = process.env.LM_PROVIDER_RECORD;
  const conversations = scriptFile ? JSON.parse(fs.readFileSync(scriptFile, 'utf8')).conversations : [];
  const isUser = (m) => m.role === vscode.LanguageModelChatMessageRole.User;
  const userText = (m) => m.content.filter((p) => p instanceof vscode.LanguageModelTextPart).map((p) => p.value).join('');
  function replyTo(messages) {
    let last = -1;
    for (let i = messages.length - 1; i >= 0; i--) {
      if (isUser(messages[i]) && userText(messages[i]).trim() !== '') {
        last = i;
        break;
      }
    }
    if (last < 0) return { key: null, reply: { text: '(no scripted reply)' } };
    const text = userText(messages[last]);
    const turn = messages.slice(last + 1).filter((m) => !isUser(m)).length;
    const conversation = conversations.find((c) => text.includes(c.when));
    const reply = conversation && conversation.turns[turn];
    return { key: conversation ? `${conversation.when}#${turn}` : null, reply: reply || { text: '(no scripted reply)' } };
  }
  const provider = {
    provideLanguageModelChatInformation() {
      return [MODEL];
    },
    async provideLanguageModelChatResponse(model, messages, options, progress, token) {
      const { key, reply } = replyTo(messages);
      if (record) {
        const line = {
          model: model.id,
          messages: messages.map((m) => ({ role: m.role === vscode.LanguageModelChatMessageRole.User ? 'user' : m.role === vscode.LanguageModelChatMessageRole.Assistant ? 'assistant' : String(m.role), content: m.content.map(describePart) })),
          tools: (options.tools || []).map((t) => t.name),
          reply: key,
        };
        fs.appendFileSync(record, `${JSON.stringify(line)}\n`);
      }
      if (reply.error) {
        throw new Error(reply.error);
      }
      for (const word of (reply.text || '').split(/(?<= )/)) {
        if (token.isCancellationRequested) return;
        if (word) progress.report(new vscode.LanguageModelTextPart(word));
      }
      for (const call of reply.tool_calls || []) {
        progress.report(new vscode.LanguageModelToolCallPart(call.id, call.name, call.arguments));
      }
    },
    async provideTokenCount(model, text) {
      const s = typeof text === 'string' ? text : JSON.stringify(text);
      return Math.ceil(s.length / 4);
    },
  };
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider('copilot-ls-test', provider));
}

module.exports = { activate, deactivate() {} };
