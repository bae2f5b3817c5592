// What the progress notification says for each `$/progress` value of an ask. Pure.

export interface WorkDoneValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
}

/** The text for the notification, or undefined to leave it as it is. */
export function progressText(value: WorkDoneValue, stepsSoFar: number): string | undefined {
  if (value.kind === 'report' && value.message) {
    // The server sends one report per tool call (`search_code: rate_limit`).
    return `step ${stepsSoFar}: ${value.message}`;
  }
  if (value.kind === 'begin' && value.message) {
    return value.message;
  }
  return undefined;
}

/** Keeps a long question readable as a notification title. */
export function shortQuestion(question: string, max = 60): string {
  const oneLine = question.replace(/\s+/g, ' ').trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}
