// `@copilot-ls` in VS Code's Chat view, where the editor has one (PROTOCOL.md section 11):
// the question goes to `copilot/ask` with the model picked in the chat (`request.model`)
// and the chat's cancellation token; the answer streams into the response, each citation
// is an anchor opening its lines (the server publishes the same diagnostics as for a
// thread answer), each suggested edit its diff and an Apply command applying it through
// the thread's own path (copilot-ls.applySuggestedEdit: the quick fix, the Refactor
// Preview). A follow-up continues the conversation, whose id each response keeps in its
// metadata.
//
// Apply is a command link in the response's markdown, not a `response.button`: VS Code
// (1.139, `chat.agent.collapseCompletedResponses`, on by default) folds everything before
// the trailing run of markdown of a completed response into "Completed N steps", and a
// button after the answer would fold the answer itself away (anchors do not: they join
// the markdown around them).

import * as vscode from 'vscode';
import { buildAskParams, newConversationId } from './ask_params';
import { answerAfterStream, applyLink, conversationOf, editDiffMarkdown, type ChatAnswerMetadata } from './chat_answer';
import type { CopilotClient } from './client';
import { describeAskError } from './errors';
import { APPLY_SUGGESTED_EDIT_COMMAND } from './apply_edit';
import { citationLabel, escapeMarkdown } from './answer_markdown';
import type { EditorModelAnswers } from './answered_by';
import type { AskResult } from './protocol';
import { stepText } from './thread_render';

export const CHAT_PARTICIPANT_ID = 'copilot-ls.chat';

/** A column past any line's end: VS Code clamps it to the line's length. */
const LINE_END = 100_000;

export interface ChatDeps {
  client: CopilotClient;
  log: vscode.LogOutputChannel;
  answers: EditorModelAnswers;
}

/** Registers the participant; undefined where this VS Code has no Chat view API. */
export function registerChatParticipant(deps: ChatDeps): vscode.Disposable | undefined {
  const chat = (vscode as Partial<typeof vscode>).chat;
  if (typeof chat?.createChatParticipant !== 'function') {
    deps.log.info('this VS Code has no chat participant API: @copilot-ls is not offered');
    return undefined;
  }
  const participant = chat.createChatParticipant(CHAT_PARTICIPANT_ID, (request, context, response, token) =>
    answerInChat(deps, request, context, response, token),
  );
  participant.iconPath = new vscode.ThemeIcon('comment-discussion');
  return participant;
}

async function answerInChat(
  deps: ChatDeps,
  request: vscode.ChatRequest,
  context: vscode.ChatContext,
  response: vscode.ChatResponseStream,
  token: vscode.CancellationToken,
): Promise<vscode.ChatResult> {
  const { client, log, answers } = deps;
  const conversationId = conversationOf(context.history as never, CHAT_PARTICIPANT_ID) ?? newConversationId();
  const editor = vscode.window.activeTextEditor;
  const params = buildAskParams({
    question: request.prompt,
    conversationId,
    editor: editor
      ? { uri: client.uriToServer(editor.document.uri), scheme: editor.document.uri.scheme, selection: client.rangeToServer(editor.selection) }
      : undefined,
  });
  const metadata: ChatAnswerMetadata = { conversationId };
  if (!params) {
    response.markdown('Ask a question about this codebase, e.g. `@copilot-ls where is the configuration read?`');
    return { metadata };
  }
  // The model picked in the chat's own picker, for this ask alone.
  const model = (request as { model?: { id?: string } }).model;
  if (model?.id) {
    params.editorModel = model.id;
  }
  params.partialResultToken = `copilot-ls-chat-${newConversationId()}`;
  params.workDoneToken = `copilot-ls-chat-work-${newConversationId()}`;
  log.info(`chat ask: ${JSON.stringify({ ...params, question: params.question.slice(0, 60) })}`);
  answers.starting(conversationId);
  let lastTurn = 0;
  let lastTurnText = '';
  let streamedAny = false;
  let result: AskResult;
  try {
    result = await client.ask(
      params,
      token,
      (work) => {
        if (work.kind === 'report' && work.message) {
          response.progress(work.message);
        }
      },
      (delta) => {
        if (delta.turn !== lastTurn) {
          if (streamedAny && lastTurnText !== '') {
            response.markdown('\n\n');
          }
          lastTurn = delta.turn;
          lastTurnText = '';
        }
        if (delta.text) {
          lastTurnText += delta.text;
          streamedAny = true;
          response.markdown(delta.text);
        }
        if (delta.step) {
          response.progress(stepText(delta.step));
        }
      },
    );
  } catch (err) {
    const report = describeAskError(err);
    if (report.kind === 'silent') {
      return { metadata };
    }
    log.error(`chat ask: ${report.message}`);
    return { metadata, errorDetails: { message: report.message.replace(/^copilot-ls: /, '') } };
  }
  const rest = answerAfterStream(lastTurnText, streamedAny, result.answer);
  if (rest) {
    response.markdown(rest);
  }
  writeCitations(response, result);
  writeEdits(response, result);
  const by = answers.ended(result.conversationId, result.model);
  if (by) {
    response.markdown(`\n\n_Answered by ${by.model}._${by.notice ? `\n\n${by.notice}` : ''}\n`);
  }
  log.info(`chat answer: ${result.stopReason}, ${result.citations.length} citations, ${result.edits.length} edits`);
  return { metadata: { conversationId: result.conversationId } };
}

function writeCitations(response: vscode.ChatResponseStream, result: AskResult): void {
  const cited = result.citations.filter((c) => c.verified);
  // A no-model answer is itself the list of places; the anchors still open them.
  if (cited.length === 0) {
    return;
  }
  response.markdown('\n\n**Citations**\n\n');
  cited.forEach((c, i) => {
    response.markdown(`${i + 1}. `);
    // The cited lines, whole (the anchor names them `rate_limit.rs:26-34`, as the thread does).
    const last = Math.max(c.line, c.endLine) - 1;
    const range = new vscode.Range(c.line - 1, 0, last, LINE_END);
    response.anchor(new vscode.Location(vscode.Uri.parse(c.uri), range), citationLabel(c));
    response.markdown(c.note ? ` — ${c.note}\n` : '\n');
  });
}

function writeEdits(response: vscode.ChatResponseStream, result: AskResult): void {
  if (result.edits.length === 0) {
    return;
  }
  response.markdown('\n\n**Suggested edits**\n\n');
  for (const edit of result.edits) {
    const apply = new vscode.MarkdownString(
      `${escapeMarkdown(edit.title)} in \`${edit.path}\`\n\n${editDiffMarkdown(edit, result)}\n${applyLink(edit)}\n\n`,
    );
    apply.isTrusted = { enabledCommands: [APPLY_SUGGESTED_EDIT_COMMAND] };
    response.markdown(apply);
  }
}
