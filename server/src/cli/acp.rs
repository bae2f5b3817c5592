//! `copilot-ls acp`: the engine as an Agent Client Protocol agent on stdio. The
//! provider is configured from the environment only (ACP has no settings channel).

use std::process::ExitCode;

use crate::session::Settings;

pub fn run(runtime: tokio::runtime::Runtime, settings: Settings) -> ExitCode {
    let served = runtime.block_on(crate::acp::serve(settings));
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
