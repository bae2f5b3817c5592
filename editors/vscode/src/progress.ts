// The cancellable notification shown while the agent works, fed by `$/progress` reports.

import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';
import { progressText, shortQuestion, type WorkDoneValue } from './progress_report';

export interface AskProgress {
  /** Sent as AskParams.workDoneToken; the server reports each tool call on it. */
  workDoneToken: string;
  /** Cancelled by the notification's Cancel button. */
  token: vscode.CancellationToken;
  onProgress(value: WorkDoneValue): void;
}

export function withAskProgress<T>(question: string, run: (progress: AskProgress) => Promise<T>): Thenable<T> {
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Copilot: ${shortQuestion(question)}`,
      cancellable: true,
    },
    (progress, token) => {
      let steps = 0;
      progress.report({ message: 'thinking…' });
      return run({
        workDoneToken: `copilot-ask-${randomUUID()}`,
        token,
        onProgress(value) {
          if (value.kind === 'report') {
            steps++;
          }
          const text = progressText(value, steps);
          if (text !== undefined) {
            progress.report({ message: text });
          }
        },
      });
    },
  );
}
