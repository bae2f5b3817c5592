//! `copilot-ls dev`: hidden commands for the model's training pipeline (`train/`), so
//! it learns on exactly what the binary makes: the index's terms for a text, and the
//! definitions the parser finds in a file. Input is JSON lines on stdin, output one JSON
//! value per input line on stdout (a bad line gets `null` and a message on stderr, and
//! the rest go on), so a script can stream a whole repository through one process.

use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::index::terms;
use crate::syntax::symbols_for_path;

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum DevCommand {
    /// Each line a JSON string → a JSON array of the index's terms for it.
    Terms,
    /// Each line `{"path", "text"}` → a JSON array of the definitions in it
    /// (`{name, qualifiedName, kind, line, docLine, endLine}`, 0-based lines), or `null`
    /// for a file without a grammar.
    Symbols,
}

pub fn run(command: DevCommand) -> ExitCode {
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (number, line) in stdin.lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                eprintln!("copilot-ls dev: stdin: {error}");
                return ExitCode::FAILURE;
            }
        };
        let value = match serde_json::from_str::<Value>(&line) {
            Ok(input) => answer(command, &input),
            Err(error) => Err(error.to_string()),
        };
        let value = value.unwrap_or_else(|error| {
            eprintln!("copilot-ls dev: line {}: {error}", number + 1);
            Value::Null
        });
        if writeln!(out, "{value}").is_err() {
            return ExitCode::FAILURE;
        }
    }
    if out.flush().is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

fn answer(command: DevCommand, input: &Value) -> Result<Value, String> {
    match command {
        DevCommand::Terms => {
            let text = input.as_str().ok_or("expected a JSON string")?;
            Ok(json!(terms(text)))
        }
        DevCommand::Symbols => {
            let path = input["path"]
                .as_str()
                .ok_or("expected {\"path\", \"text\"}")?;
            let text = input["text"]
                .as_str()
                .ok_or("expected {\"path\", \"text\"}")?;
            let Some(found) = symbols_for_path(path, text) else {
                return Ok(Value::Null);
            };
            let symbols = found.map_err(|error| error.to_string())?;
            Ok(Value::Array(
                symbols
                    .iter()
                    .map(|symbol| {
                        json!({
                            "name": symbol.name,
                            "qualifiedName": symbol.qualified_name,
                            "kind": symbol.kind.as_str(),
                            "line": symbol.line,
                            "docLine": symbol.doc_line,
                            "endLine": symbol.end_line,
                        })
                    })
                    .collect(),
            ))
        }
    }
}
