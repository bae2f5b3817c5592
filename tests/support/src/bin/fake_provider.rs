//! The `fake-provider` binary: serves a script on a free port of 127.0.0.1, printing the
//! port alone on one line, until it is killed.
//!
//! Usage: `fake-provider SCRIPT.json [--record FILE]`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use copilot_ls_test_support::fake_provider::FakeProvider;

const USAGE: &str = "usage: fake-provider SCRIPT.json [--record FILE]";

fn main() -> ExitCode {
    let mut script_path: Option<PathBuf> = None;
    let mut record: Option<PathBuf> = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--record" {
            let Some(file) = args.next() else {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            };
            record = Some(file.into());
        } else if arg == "--help" || arg == "-h" {
            eprintln!("{USAGE}");
            return ExitCode::SUCCESS;
        } else if script_path.is_none() {
            script_path = Some(arg.into());
        } else {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    }
    let Some(script_path) = script_path else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let script = match std::fs::read_to_string(&script_path)
        .map_err(anyhow::Error::from)
        .and_then(|text| Ok(serde_json::from_str(&text)?))
    {
        Ok(script) => script,
        Err(e) => {
            eprintln!("fake-provider: {}: {e}", script_path.display());
            return ExitCode::from(2);
        }
    };
    let provider = match FakeProvider::try_start(&script, record.as_deref()) {
        Ok(provider) => provider,
        Err(e) => {
            eprintln!("fake-provider: {e:#}");
            return ExitCode::from(2);
        }
    };
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{}", provider.port())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    drop(stdout);
    // The server runs on its own thread; this one only has to stay alive.
    loop {
        std::thread::park();
    }
}
