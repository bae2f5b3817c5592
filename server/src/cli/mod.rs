//! The command line: `serve` (LSP over stdio, the default), `acp` (the Agent Client
//! Protocol over stdio), `mcp` (the Model Context Protocol over stdio), `ask` (one question, headless, same engine), `index` (bring
//! the persistent index up to date) and `tool` (run one tool as the model would).
//! stdout carries only the protocol or the requested output; logs go to stderr.

mod acp;
mod ask;
mod dev;
mod doctor;
mod edit_diff;
mod index;
mod index_progress;
mod mcp;
#[cfg(unix)]
mod stdio;
mod tool;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::session::Settings;

/// `copilot-ls --version`: the version and the commit built from (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("COPILOT_LS_COMMIT"),
    ")"
);

#[derive(Parser)]
#[command(
    name = "copilot-ls",
    version = VERSION,
    about = "A language server that answers questions about your codebase, grounded in the real files",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Speak LSP over stdio (the default).
    Serve {
        /// Accepted for clients that always pass it (vscode-languageclient does).
        #[arg(long, hide = true)]
        stdio: bool,
    },
    /// Ask one question about a workspace and print the answer.
    ///
    /// The first ask in a workspace builds its index first (a few seconds for a few
    /// thousand files, with progress on stderr); later asks read only what changed.
    Ask {
        /// Workspace root (default: the current directory); give it again for each
        /// further root (paths are then shown as `<root name>/<path>`).
        #[arg(long, value_name = "DIR")]
        workspace: Vec<PathBuf>,
        /// Print exactly one AskResult JSON object instead of markdown.
        #[arg(long)]
        json: bool,
        /// Most model calls for this ask (overrides maxSteps).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
        max_steps: Option<u32>,
        /// Do not wait for the index to be up to date: answer from what it holds after
        /// at most 2 s (the answer then says how complete it was).
        #[arg(long)]
        no_wait: bool,
        /// The question.
        #[arg(required = true, num_args = 1.., value_name = "QUESTION")]
        question: Vec<String>,
    },
    /// Speak the Agent Client Protocol over stdio (Zed, JetBrains, Neovim, Emacs agents).
    Acp,
    /// Serve the Model Context Protocol over stdio (Claude Code, Codex, Cursor, VS Code, Zed).
    Mcp {
        /// Workspace root (default: the client's roots, else the current directory);
        /// give it again for each further root.
        #[arg(long, value_name = "DIR")]
        workspace: Vec<PathBuf>,
    },
    /// Bring the workspace's persistent index up to date and print what it holds.
    Index {
        /// Workspace root (default: the current directory); give it again for each
        /// further root (each keeps an index of its own).
        #[arg(long, value_name = "DIR")]
        workspace: Vec<PathBuf>,
        /// Print one JSON object {files, textFiles, chunks, symbols, filesRead, seconds,
        /// bytes, unreached, history}: `files` counts every file indexed (binary ones by
        /// path only), `unreached` the paths the walk could not read, `history` is
        /// {commits, complete, reason}. With several roots: {roots: [{root, …}], …} with
        /// the totals at the top.
        #[arg(long)]
        json: bool,
    },
    /// Check what a first ask needs (provider, key, endpoint, cache, index) and say
    /// what to fix. Exit 0 when an ask would work.
    Doctor {
        /// Workspace root (default: the current directory); give it again for each
        /// further root.
        #[arg(long, value_name = "DIR")]
        workspace: Vec<PathBuf>,
        /// Print one JSON object {checks: [{name, status, detail}]}.
        #[arg(long)]
        json: bool,
    },
    /// Run one tool exactly as the model would call it and print its result.
    Tool {
        /// Tool name: locate, search_code, read_file, list_directory, find_files, find_symbol, find_references, find_related (with a code model), file_outline, git_log, git_blame, git_diff, list_open_buffers, read_open_buffer, propose_edit.
        name: String,
        /// The tool's arguments as a JSON object.
        #[arg(default_value = "{}")]
        json: String,
        /// Workspace root (default: the current directory); give it again for each
        /// further root.
        #[arg(long, value_name = "DIR")]
        workspace: Vec<PathBuf>,
        /// Do not bring the index up to date first: answer from what it holds now.
        #[arg(long)]
        no_wait: bool,
    },
    /// For the training pipelines (train/): the index's terms for texts, the parser's
    /// definitions in files, the ranker's features of a question's candidate files; JSON
    /// lines in and out.
    #[command(hide = true)]
    Dev {
        #[arg(value_enum)]
        command: dev::DevCommand,
        /// The workspace (`features`): indexed with its history first.
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// How many of the lexical ranking's chunks `features` reads (its files, and
        /// the files past changes vote for, are the candidates).
        #[arg(long, default_value_t = 200)]
        limit: usize,
    },
}

pub fn main() -> ExitCode {
    // `--stdio` alone (as vscode-languageclient appends it) means serve.
    let args: Vec<String> = std::env::args().collect();
    let args: Vec<String> = if args.len() == 2 && args[1] == "--stdio" {
        vec![args[0].clone()]
    } else {
        args
    };
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            // clap prints help/version to stdout and errors to stderr; usage errors exit 2.
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    // Warnings only by default, in every mode: MCP and ACP clients show a server's
    // stderr to their users as errors, and an editor's log is no place for chatter.
    // A person at a terminal (`ask`, `index`, `tool`, `doctor`) reads them as sentences.
    let for_a_person = matches!(
        cli.command,
        Some(
            Command::Ask { .. }
                | Command::Index { .. }
                | Command::Tool { .. }
                | Command::Doctor { .. }
        )
    );
    // The MCP library's warnings of error replies are off (`mcp::QUIET_LIBRARY_LOGS`).
    init_logging(
        &format!("warn,{}", crate::mcp::QUIET_LIBRARY_LOGS),
        for_a_person,
    );
    let (mut settings, mut problems) = Settings::from_env(&crate::session::settings::process_env);
    // Only an LSP client can run the editor's model; it says so at `initialize`.
    if !matches!(cli.command, None | Some(Command::Serve { .. })) {
        problems.extend(
            settings
                .for_client(false)
                .map(|problem| format!("environment: {problem}")),
        );
    }

    // `tool` is synchronous: it gets no runtime (starting one costs a few ms per call).
    let runtime = || match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => Some(runtime),
        Err(error) => {
            eprintln!("copilot-ls: cannot start the async runtime: {error}");
            None
        }
    };
    match cli.command {
        None | Some(Command::Serve { .. }) => {
            let Some(runtime) = runtime() else {
                return ExitCode::FAILURE;
            };
            serve(runtime, settings, problems)
        }
        Some(Command::Ask {
            workspace,
            json,
            max_steps,
            no_wait,
            question,
        }) => {
            for problem in &problems {
                eprintln!("copilot-ls: {problem}");
            }
            let Some(runtime) = runtime() else {
                return ExitCode::FAILURE;
            };
            runtime.block_on(ask::run(
                settings,
                workspace,
                json,
                max_steps,
                no_wait,
                question.join(" "),
            ))
        }
        Some(Command::Acp) => {
            for problem in &problems {
                tracing::error!("{problem}");
            }
            let Some(runtime) = runtime() else {
                return ExitCode::FAILURE;
            };
            acp::run(runtime, settings)
        }
        Some(Command::Mcp { workspace }) => {
            let Some(runtime) = runtime() else {
                return ExitCode::FAILURE;
            };
            mcp::run(runtime, workspace)
        }
        Some(Command::Tool {
            name,
            json,
            workspace,
            no_wait,
        }) => tool::run(&name, &json, workspace, no_wait),
        Some(Command::Index { workspace, json }) => index::run(workspace, json),
        Some(Command::Dev {
            command,
            workspace,
            limit,
        }) => dev::run(command, workspace, limit),
        Some(Command::Doctor { workspace, json }) => {
            let Some(runtime) = runtime() else {
                return ExitCode::FAILURE;
            };
            runtime.block_on(doctor::run(settings, problems, workspace, json))
        }
    }
}

/// `serve`: LSP over stdio. Exit code 0, or 1 for an `exit` without `shutdown` first.
fn serve(runtime: tokio::runtime::Runtime, settings: Settings, problems: Vec<String>) -> ExitCode {
    #[cfg(unix)]
    let output = match stdio::take_protocol_stdout() {
        Ok(file) => tokio::fs::File::from_std(file),
        Err(error) => {
            eprintln!("copilot-ls: cannot take stdout for the protocol: {error}");
            return ExitCode::FAILURE;
        }
    };
    #[cfg(not(unix))]
    let output = tokio::io::stdout();
    let outcome = runtime.block_on(async {
        crate::lsp::serve(settings, problems, tokio::io::stdin(), output).await
    });
    tracing::info!(ending = ?outcome.ending, "serving ended");
    // Do not wait for a background index build of a huge folder, nor for the blocking
    // read of a stdin that is still open after `exit`: the editor is done with us.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    ExitCode::from(outcome.exit_code())
}

/// Logs to stderr; `COPILOT_LS_LOG` (an `EnvFilter` such as `debug`) overrides the level.
/// `plain`: each line as a person reads it, `copilot-ls: <message>` (no time, level or
/// module), unless `COPILOT_LS_LOG` asks for a debugging log.
fn init_logging(default_level: &str, plain: bool) {
    let asked = tracing_subscriber::EnvFilter::try_from_env("COPILOT_LS_LOG");
    let plain = plain && asked.is_err();
    let filter = asked.unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false);
    let _ = if plain {
        builder.event_format(PlainLine).try_init()
    } else {
        builder.try_init()
    };
}

/// `copilot-ls: <message>`: a log line for a person at the command line.
struct PlainLine;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for PlainLine
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        context: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        write!(writer, "copilot-ls: ")?;
        context
            .field_format()
            .format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// The workspace roots for a command: each `--workspace`, else the current directory.
fn workspace_roots(flags: Vec<PathBuf>) -> Vec<PathBuf> {
    if flags.is_empty() {
        vec![std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))]
    } else {
        flags
    }
}

/// The sandbox over the command's roots, or the line that says why a root cannot be
/// one (`copilot-ls: cannot use DIR as the workspace: …`).
fn roots_sandbox(roots: &[PathBuf]) -> Result<crate::workspace::sandbox::Sandbox, String> {
    for root in roots {
        if let Err(error) = crate::workspace::sandbox::Sandbox::new(root) {
            return Err(format!(
                "copilot-ls: cannot use {} as the workspace: {error}",
                root.display()
            ));
        }
    }
    crate::workspace::sandbox::Sandbox::with_roots(roots)
        .map_err(|error| format!("copilot-ls: cannot use these folders as the workspace: {error}"))
}
