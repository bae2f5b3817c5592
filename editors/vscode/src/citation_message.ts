// What the Problems panel says of a citation without a note. The server (PROTOCOL.md
// section 5) gives such a citation's diagnostic the whole question as its message, which
// for a long or multi-line question fills the panel; the extension knows the questions it
// asked, recognises them and shows a short line naming the question instead. Pure.

/** The longest excerpt of a question the message keeps. */
const EXCERPT_CHARACTERS = 60;

/** How many of the latest questions are remembered (the server keeps only the last ask's). */
const REMEMBERED_QUESTIONS = 20;

/** The question's first non-empty line, shortened; `…` when anything was left out. */
export function questionExcerpt(question: string, max = EXCERPT_CHARACTERS): string {
  const lines = question.split(/\r?\n/).map((l) => l.replace(/\s+/g, ' ').trim());
  const first = lines.findIndex((l) => l !== '');
  if (first < 0) {
    return '';
  }
  const line = lines[first];
  const more = lines.slice(first + 1).some((l) => l !== '');
  if (line.length > max) {
    return `${line.slice(0, max - 1).trimEnd()}…`;
  }
  return more ? `${line} …` : line;
}

/** The message of a citation without a note, for the question it answers. */
export function notelessCitationMessage(question: string): string {
  return `Cited in the answer to: ${questionExcerpt(question)}`;
}

/** The questions sent to the server lately, newest last. */
export class AskedQuestions {
  private readonly questions: string[] = [];

  add(question: string): void {
    const at = this.questions.indexOf(question);
    if (at >= 0) {
      this.questions.splice(at, 1);
    }
    this.questions.push(question);
    if (this.questions.length > REMEMBERED_QUESTIONS) {
      this.questions.shift();
    }
  }

  /**
   * The message to show for a citation diagnostic's `message`: a short one when it is a
   * question we asked (the citation had no note), else the message (its note) unchanged.
   */
  citationMessage(message: string): string {
    return this.questions.includes(message) ? notelessCitationMessage(message) : message;
  }
}
