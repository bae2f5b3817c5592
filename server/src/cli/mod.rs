//! Command line: `serve` (LSP over stdio), `ask`, `tool`.

pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
