//! `copilot-ls acp`: the engine as an Agent Client Protocol agent on stdio. The
//! provider is configured from the environment only (ACP has no settings channel).

use std::process::ExitCode;

use crate::session::Settings;

pub fn run(runtime: tokio::runtime::Runtime, settings: Settings) -> ExitCode {
    // As for `serve`: only the protocol writer holds the editor's pipe; fd 1 becomes
    // stderr, so a stray print lands in the log instead of corrupting the stream.
    #[cfg(unix)]
    let output = match super::stdio::take_protocol_stdout() {
        Ok(file) => file,
        Err(error) => {
            tracing::error!("cannot take stdout for the protocol: {error}");
            return ExitCode::FAILURE;
        }
    };
    #[cfg(not(unix))]
    let output = std::io::stdout();
    let served = runtime.block_on(crate::acp::serve(settings, output));
    // The client is gone: do not wait for a background index build of a huge folder.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error:#}");
            ExitCode::FAILURE
        }
    }
}
