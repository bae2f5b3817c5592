//! `copilot-ls mcp [--workspace DIR]`: the engine as a Model Context Protocol server on
//! stdio. The workspace is the flag, else the client's first root, else the current
//! directory (see `mcp/engine.rs`).

use std::path::PathBuf;
use std::process::ExitCode;

pub fn run(runtime: tokio::runtime::Runtime, workspace: Option<PathBuf>) -> ExitCode {
    if let Some(dir) = &workspace {
        if let Err(error) = crate::workspace::sandbox::Sandbox::new(dir) {
            eprintln!(
                "copilot-ls: cannot use {} as the workspace: {error}",
                dir.display()
            );
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
