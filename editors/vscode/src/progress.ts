// What a running ask shows outside the thread. While the thread is on screen it shows
// the ask itself (its phase line, the Stop button), and a notification over it would only
// cover its Ask/Stop/New buttons and the question box; so the cancellable notification
// (titled with the question, its message the ask's phase in the thread's words) is shown
// only while the thread is out of view, and closes when it comes back.

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

/** Whether the thread is on screen, and when that changes (answer_view.ts). */
export interface ThreadVisibility {
  readonly visible: boolean;
  readonly onDidChangeVisibility: vscode.Event<boolean>;
}

/** The notification of one ask while it is open. */
interface Toast {
  report(message: string): void;
  close(): void;
}

function openToast(title: string, message: string, cancel: vscode.CancellationTokenSource): Toast {
  let close = () => {};
  let report = (_message: string) => {};
  const closed = new Promise<void>((resolve) => (close = resolve));
  void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (progress, token) => {
    token.onCancellationRequested(() => cancel.cancel());
    report = (m) => progress.report({ message: m });
    report(message);
    return closed;
  });
  return { report: (m) => report(m), close: () => close() };
}

export async function withAskProgress<T>(
  question: string,
  cancel: vscode.CancellationToken,
  thread: ThreadVisibility,
  run: (progress: AskProgress) => Promise<T>,
): Promise<T> {
  const source = new vscode.CancellationTokenSource();
  const subs = [cancel.onCancellationRequested(() => source.cancel())];
  if (cancel.isCancellationRequested) {
    source.cancel();
  }
  const title = `copilot-ls: "${shortQuestion(question, 50)}"`;
  let phase: AskPhase = WAITING;
  let toast: Toast | undefined;
  const follow = (visible: boolean) => {
    if (visible) {
      toast?.close();
      toast = undefined;
    } else if (!toast) {
      toast = openToast(title, phaseText(phase), source);
    }
  };
  follow(thread.visible);
  subs.push(thread.onDidChangeVisibility(follow));
  let last = phaseText(phase);
  const show = (next: AskPhase) => {
    phase = next;
    const text = phaseText(next);
    if (text !== last) {
      last = text;
      toast?.report(text);
    }
  };
  const id = randomUUID();
  try {
    return await run({ workDoneToken: `copilot-ask-${id}`, partialResultToken: `copilot-answer-${id}`, token: source.token, show });
  } finally {
    for (const s of subs) s.dispose();
    toast?.close();
    source.dispose();
  }
}
