// The cancellable notification shown while the agent works. Its title names the
// question once; its message is the ask's phase in the same words as the status item and
// the thread ("waiting for the model", "step 2: read_file: …", "the model is writing").

import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { phaseText, WAITING, type AskPhase } from './ask_phase';
import { shortQuestion } from './progress_report';

export interface AskProgress {
  /** Sent as AskParams.workDoneToken; the server reports each tool call on it. */
  workDoneToken: string;
  /** Sent as AskParams.partialResultToken; the answer streams on it. */
  partialResultToken: string;
  /** Cancelled by the notification's Cancel button or `cancel` of withAskProgress. */
  token: vscode.CancellationToken;
  show(phase: AskPhase): void;
}

export function withAskProgress<T>(question: string, cancel: vscode.CancellationToken, run: (progress: AskProgress) => Promise<T>): Thenable<T> {
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `copilot-ls: "${shortQuestion(question, 50)}"`,
      cancellable: true,
    },
    (progress, token) => {
      const source = new vscode.CancellationTokenSource();
      const subs = [token.onCancellationRequested(() => source.cancel()), cancel.onCancellationRequested(() => source.cancel())];
      if (cancel.isCancellationRequested) {
        source.cancel();
      }
      let last = '';
      const show = (phase: AskPhase) => {
        const text = phaseText(phase);
        if (text !== last) {
          last = text;
          progress.report({ message: text });
        }
      };
      show(WAITING);
      const id = randomUUID();
      return run({ workDoneToken: `copilot-ask-${id}`, partialResultToken: `copilot-answer-${id}`, token: source.token, show }).finally(() => {
        for (const s of subs) s.dispose();
        source.dispose();
      });
    },
  );
}
