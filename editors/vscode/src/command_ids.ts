// The extension's command ids before they were renamed. Pure, so the manifest test
// checks them in plain Node.

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
