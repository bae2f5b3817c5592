// Command ids the pure modules name (the Chat view's Apply link), and the extension's
// command ids before they were renamed. Pure, so the manifest test checks them in plain
// Node.

/** Applies a SuggestedEdit (its argument) as the thread's Apply… does. */
export const APPLY_SUGGESTED_EDIT_COMMAND_ID = 'copilot-ls.applySuggestedEdit';

/**
 * The command ids before the rename (`copilot.*`, read like GitHub Copilot's): still
 * registered, out of the palette, so keybindings made for them keep working.
 */
export const OLD_COMMAND_IDS: Record<string, string> = {
  'copilot.askQuestion': 'copilot-ls.ask',
  'copilot.askAboutSelection': 'copilot-ls.askAboutSelection',
  'copilot.followUp': 'copilot-ls.followUp',
  'copilot.clearAnswers': 'copilot-ls.clearAnswers',
  'copilot.showLastAnswer': 'copilot-ls.showLastAnswer',
  'copilot.goToCitation': 'copilot-ls.goToCitation',
  'copilot.restartServer': 'copilot-ls.restartServer',
};
