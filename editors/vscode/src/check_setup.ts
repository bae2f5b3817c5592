// The Check Setup command: the extension's own checks and the server's `copilot.doctor`
// checks, one line each, in the "copilot-ls Setup" output channel (setup_report.ts
// formats them, with their advice naming the settings); when the model's setup is not
// ok, a notification offers to open those settings.

import * as vscode from 'vscode';
import type { CopilotClient } from './client';
import { DOCTOR_COMMAND, type DoctorCheck } from './protocol';
import { doctorChecks, extensionChecks, forEditor, reportLines, settingsToOpen, summary } from './setup_report';

export const SETUP_CHANNEL = 'copilot-ls Setup';

export class CheckSetup implements vscode.Disposable {
  private channel: vscode.OutputChannel | undefined;

  constructor(private readonly client: CopilotClient) {}

  async run(): Promise<void> {
    const checks = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'copilot-ls: checking the setup' },
      () => this.collect(),
    );
    this.channel ??= vscode.window.createOutputChannel(SETUP_CHANNEL);
    const channel = this.channel;
    channel.clear();
    channel.appendLine(`copilot-ls: Check Setup at ${new Date().toLocaleString()}: ${summary(checks)}`);
    for (const line of reportLines(checks)) {
      channel.appendLine(line);
    }
    channel.show(true);
    const failed = checks.filter((c) => c.status === 'fail').map((c) => c.name);
    const settings = settingsToOpen(checks);
    const open = 'Open Settings';
    const buttons = settings ? [open] : [];
    const offer = (picked: string | undefined) => {
      if (picked === open && settings) {
        void vscode.commands.executeCommand('workbench.action.openSettings', settings);
      }
    };
    // Not awaited: the notification waits for a click, the command should not.
    if (failed.length > 0) {
      void vscode.window.showWarningMessage(`copilot-ls: Check Setup: ${failed.join(', ')} failed; see the ${SETUP_CHANNEL} output.`, ...buttons).then(offer);
    } else if (settings) {
      const warned = checks.filter((c) => c.status === 'warn').map((c) => c.name);
      void vscode.window
        .showInformationMessage(`copilot-ls: Check Setup: ${warned.join(', ')} to look at (see the ${SETUP_CHANNEL} output); the copilot-ls settings change them.`, ...buttons)
        .then(offer);
    }
  }

  private async collect(): Promise<DoctorCheck[]> {
    const facts = await this.client.setupFacts();
    const checks = extensionChecks(facts);
    if (!facts.running) {
      return checks;
    }
    if (!facts.commands.includes(DOCTOR_COMMAND)) {
      checks.push({
        name: 'doctor',
        status: 'warn',
        detail: `this server has no ${DOCTOR_COMMAND} (copilot-ls 0.4.0 added it): update the server to see its own checks`,
      });
      return checks;
    }
    try {
      checks.push(...forEditor(doctorChecks(await this.client.doctor())));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      checks.push({ name: 'doctor', status: 'fail', detail: `${DOCTOR_COMMAND} failed: ${message}` });
    }
    return checks;
  }

  dispose(): void {
    this.channel?.dispose();
  }
}
