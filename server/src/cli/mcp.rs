//! `copilot-ls mcp [--workspace DIR]...`: the engine as a Model Context Protocol server
//! on stdio. The roots are each flag, else the client's roots, else the current
//! directory (see `mcp/engine.rs`).

use std::path::PathBuf;
use std::process::ExitCode;

pub fn run(runtime: tokio::runtime::Runtime, workspace: Vec<PathBuf>) -> ExitCode {
    if !workspace.is_empty() {
        if let Err(why) = super::roots_sandbox(&workspace) {
            eprintln!("{why}");
            return ExitCode::from(2);
        }
    }
    // As for `serve` and `acp`: only the protocol writer holds the client's pipe; fd 1
    // becomes stderr, so a stray print lands in the log instead of corrupting the stream.
    #[cfg(unix)]
    let output = match super::stdio::take_protocol_stdout() {
        Ok(file) => tokio::fs::File::from_std(file),
        Err(error) => {
            tracing::error!("cannot take stdout for the protocol: {error}");
            return ExitCode::FAILURE;
        }
    };
    #[cfg(not(unix))]
    let output = tokio::io::stdout();
    let served = runtime.block_on(crate::mcp::serve(workspace, tokio::io::stdin(), output));
    // The client is gone: do not wait for a background index build, nor for the blocking
    // read of stdin.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error:#}");
            ExitCode::FAILURE
        }
    }
}
