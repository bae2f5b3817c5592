// One question from start to end: its exchange in the thread, the notification (while
// the thread is out of view), the status item's count of running asks, the streamed
// deltas, and the reply or the error.

import * as vscode from 'vscode';
import type { AnswerStore } from './answer_store';
import type { AnswerView } from './answer_view';
import type { EditorModelAnswers } from './answered_by';
import { buildAskParams, type EditorContext } from './ask_params';
import type { CopilotClient } from './client';
import { showAskError } from './error_notification';
import { describeAskError } from './errors';
import { withAskProgress } from './progress';
import { shortQuestion } from './progress_report';
import type { StatusItem } from './status';
import type { Thread } from './thread';

export interface AskDeps {
  client: CopilotClient;
  store: AnswerStore;
  view: AnswerView;
  log: vscode.LogOutputChannel;
  status: StatusItem;
  answers: EditorModelAnswers;
}

export async function runAsk(deps: AskDeps, thread: Thread, question: string, editor: EditorContext | undefined): Promise<void> {
  const { client, store, view, log, status, answers } = deps;
  const params = buildAskParams({ question, conversationId: thread.conversationId, editor });
  if (!params) {
    return;
  }
  const exchange = thread.start(params.question);
  store.changed(exchange);
  view.show();
  const activity = status.asks.begin(shortQuestion(params.question));
  const cancel = new vscode.CancellationTokenSource();
  const stop = view.onStop(exchange, () => cancel.cancel());
  try {
    await withAskProgress(params.question, cancel.token, view, async (progress) => {
      params.workDoneToken = progress.workDoneToken;
      params.partialResultToken = progress.partialResultToken;
      log.info(`ask: ${JSON.stringify({ ...params, question: shortQuestion(params.question) })}`);
      answers.starting(params.conversationId);
      // `arrivedAt` only for deltas: the view measures how long streamed text takes to show.
      const update = (arrivedAt?: number) => {
        progress.show(exchange.phase);
        activity.update(exchange.phase);
        store.changed(exchange, arrivedAt);
      };
      const result = await client.ask(
        params,
        progress.token,
        (value) => {
          thread.applyWork(exchange, { kind: 'work', value });
          update();
        },
        (delta) => {
          const arrivedAt = Date.now();
          thread.applyDelta(exchange, delta);
          update(arrivedAt);
        },
      );
      log.info(
        `answer: ${result.stopReason}, ${result.citations.length} citations, ${result.edits.length} edits, ${result.steps.length} steps` +
          (exchange.streamed ? ', streamed' : ''),
      );
      exchange.answeredBy = answers.ended(result.conversationId, result.model);
      store.complete(thread, exchange, result);
    });
  } catch (err) {
    const report = describeAskError(err);
    if (report.kind === 'silent') {
      thread.cancel(exchange);
      log.info('ask cancelled');
    } else {
      // The thread shows the error with the buttons that fix it; a notification too only
      // when the thread is out of view (one over it would cover its input box, and stay
      // after the problem is fixed).
      thread.fail(exchange, report.message, report.actions);
      log.error(report.message);
      if (!(view.visible && store.thread.has(exchange))) {
        // Not awaited: the notification waits for a click, the status should not.
        void showAskError(err);
      }
    }
    store.changed(exchange);
  } finally {
    stop.dispose();
    cancel.dispose();
    activity.end();
  }
}
