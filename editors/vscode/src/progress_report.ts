// The `$/progress` values of an ask's workDoneToken as the extension reads them, and a
// question shortened for titles. Pure.

export interface WorkDoneValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
}

/** Keeps a long question readable as a notification title. */
export function shortQuestion(question: string, max = 60): string {
  const oneLine = question.replace(/\s+/g, ' ').trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}
