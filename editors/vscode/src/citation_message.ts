// What the Problems panel says of a citation without a note. The server (PROTOCOL.md
// section 5) gives such a citation's diagnostic the whole question as its message, which
// for a long or multi-line question fills the panel; the extension knows the questions it
// asked, recognises them and shows a short line naming the question instead, led by the
// citation's number in the answer and what is at the cited lines (the definition there,
// else the first line of code), so the panel's rows differ. Pure.

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

/** The longest excerpt of the cited line the message keeps. */
const LINE_CHARACTERS = 80;

/** A line that starts a definition, in the languages the index knows. */
const DEFINITION =
  /^(?:(?:pub(?:\([^)]*\))?|export|default|async|static|public|private|protected|abstract|final|unsafe|const|extern|override|open|inline|virtual)\s+)*(?:fn|def|class|struct|enum|trait|impl|interface|type|function|func|mod|module|namespace|union|record|object|let|var|val|const)\b/;

/** Not code: a blank line, a comment's, an attribute or a decorator. */
function isCode(line: string): boolean {
  return line !== '' && !/^(?:\/\/|\/\*|\*|#(?!include|define)|--|;|@|<!--)/.test(line);
}

/**
 * What is at a citation's lines (0-based, inclusive): its first definition, else its
 * first line of code, shortened; undefined when the lines hold neither.
 */
export function citedLineText(lines: readonly string[], start: number, end: number, max = LINE_CHARACTERS): string | undefined {
  const cited = lines.slice(Math.max(0, start), Math.max(start, end) + 1).map((l) => l.replace(/\s+/g, ' ').trim());
  const found = cited.find((l) => DEFINITION.test(l)) ?? cited.find(isCode);
  if (found === undefined) {
    return undefined;
  }
  // A body's opening brace says nothing.
  const line = found.replace(/\s*\{$/, '');
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/** What the message of a citation without a note names besides the question. */
export interface CitedPlace {
  /** 0-based index of the citation in the answer. */
  index?: number;
  /** citedLineText of its lines. */
  text?: string;
}

/** The message of a citation without a note, for the question it answers. */
export function notelessCitationMessage(question: string, place: CitedPlace = {}): string {
  const number = place.index !== undefined ? `(${place.index + 1}) ` : '';
  const text = place.text ? `${place.text} — ` : '';
  return `${number}${text}Cited in the answer to: ${questionExcerpt(question)}`;
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
  citationMessage(message: string, place?: () => CitedPlace): string {
    return this.questions.includes(message) ? notelessCitationMessage(message, place?.()) : message;
  }
}
