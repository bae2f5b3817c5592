//! The `copilot-ls` binary: hands off to the command line layer.

fn main() -> std::process::ExitCode {
    copilot_ls::cli::main()
}
