//! The docs against the binary (issue #25). Every `copilot-ls` command in README.md and
//! docs/*.md (shell blocks, inline code, editor configurations) must name a subcommand
//! and flags that the binary's own `--help` lists; every repository path they tell the
//! reader to run or open, and every relative link's target, must exist; and the shell
//! blocks' offline one-shot commands (`--version`, `--help`, `ask`, `index`, `tool`) must
//! run, on a scratch copy of the sample workspace. A flag renamed in the code, or a doc
//! edited without the binary, fails here with every mismatch at its file:line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use copilot_ls_test_support::lsp_client::copy_dir;
use copilot_ls_test_support::process::run_bounded;
use copilot_ls_test_support::workspace::{fixtures_dir, snapshot};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
const LIMIT: Duration = Duration::from_secs(120);
/// Fence languages of commands, and of editor configurations.
const SHELL: [&str; 3] = ["sh", "bash", "shell"];
const CONFIG: [&str; 5] = ["json", "lua", "toml", "yaml", "elisp"];
/// A word `DIR/…` for one of these names a file of the repository, unless it is one of
/// `NOT_PATHS`, which only look like paths (an MCP method).
const TOP_DIRS: [&str; 8] = [
    "bench", "docs", "editors", "fixtures", "scripts", "server", "tests", ".ci",
];
const NOT_PATHS: [&str; 1] = ["server/discover"];
const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// What the binary accepts: each subcommand's ("" for none) flags and if they take a value.
type Cli = BTreeMap<String, BTreeMap<String, bool>>;

/// README.md and docs/*.md: (path in the repository, text).
fn docs() -> Vec<(String, String)> {
    let entries = std::fs::read_dir(Path::new(REPO).join("docs")).unwrap();
    let names = entries.map(|e| format!("docs/{}", e.unwrap().file_name().to_string_lossy()));
    // docs/protocol.md is the wire contract, a copy of the project's: it names what is
    // not built yet (docs/protocol-notes.md lists it), and conformance tests outside
    // this repository check the binary against it.
    let names = names.filter(|n| n != "docs/protocol.md");
    let mut names: Vec<String> = names.filter(|n| n.ends_with(".md")).collect();
    names.push("README.md".into());
    names.sort();
    let read = |name: &String| std::fs::read_to_string(Path::new(REPO).join(name)).unwrap();
    names.iter().map(|n| (n.clone(), read(n))).collect()
}

/// The binary's flags, read from `--help` and each subcommand's `--help`.
fn cli() -> Cli {
    let help = |args: &[&str]| {
        let mut command = Command::new(BIN);
        command.args(args).env_clear();
        let run = run_bounded(command, LIMIT).expect("--help exits");
        assert_eq!(run.code, Some(0), "copilot-ls {args:?}: {}", run.stderr);
        run.stdout
    };
    // clap's option lines: `  -h, --help  Print help`, `      --workspace <DIR>  …`.
    let options = |help: &str| {
        let mut flags = BTreeMap::new();
        let lines = help.lines().map(str::trim_start);
        for line in lines.filter(|l| l.starts_with('-')) {
            let spec: Vec<&str> = line.split("  ").next().unwrap().split([',', ' ']).collect();
            let takes_value = spec.last().unwrap().starts_with('<');
            let names = spec.iter().filter(|w| w.starts_with('-'));
            flags.extend(names.map(|name| (name.to_string(), takes_value)));
        }
        flags
    };
    let top = help(&["--help"]);
    let mut cli = BTreeMap::from([(String::new(), options(&top))]);
    let commands = top.lines().skip_while(|l| *l != "Commands:").skip(1);
    for line in commands.take_while(|l| !l.is_empty()) {
        let name = line.split_whitespace().next().unwrap();
        // `help` has no `--help` of its own.
        let own = (name != "help").then(|| options(&help(&[name, "--help"])));
        cli.insert(name.to_string(), own.unwrap_or_default());
    }
    cli
}

/// A shell line's simple commands as words (quotes, a usage line's `[optional]` brackets
/// and `#` comments dropped), split at `&&`, `||`, `;`, `|`; a `|` before a flag parts a
/// usage line's alternatives (`copilot-ls --version | --help`), one command each.
fn commands(line: &str) -> Vec<Vec<String>> {
    let (mut out, mut words, mut word) = (Vec::new(), Vec::new(), None::<String>);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let text = word.get_or_insert_with(String::new);
                while let Some(q) = chars.next().filter(|&q| q != c) {
                    let escaped = q == '\\' && c == '"';
                    text.extend(if escaped { chars.next() } else { Some(q) });
                }
            }
            '#' if word.is_none() => break,
            '[' | ']' => {}
            ' ' | '\t' => words.extend(word.take()),
            '&' | '|' | ';' => {
                words.extend(word.take());
                if chars.peek() == Some(&c) {
                    chars.next();
                } else if c == '|' && chars.clone().find(|c| !c.is_whitespace()) == Some('-') {
                    out.push(words.clone());
                    words.pop();
                    continue;
                }
                out.push(std::mem::take(&mut words));
            }
            _ => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    out.push(words);
    out.retain(|words| !words.is_empty());
    out
}

/// An editor configuration line as words: quoted strings whole, every list's brackets as
/// `{` and `}`, and `,` `=` `:` `'` dropped (`"args": ["acp"]` and `:command-params
/// '("acp")` both give `args`/`command-params`, `{`, `acp`, `}`).
fn config_words(n: usize, line: &str) -> Vec<(usize, String)> {
    let spaced = line.replace(['[', '{', '('], " { ");
    let spaced = spaced.replace([']', '}', ')'], " } ");
    let words = commands(&spaced.replace([',', '=', ':', '\''], " ")).concat();
    words.into_iter().map(|word| (n, word)).collect()
}

fn is_binary(word: &str) -> bool {
    word.rsplit('/').next() == Some("copilot-ls")
}

/// The arguments of a command that runs `copilot-ls`: as the command, or as a path handed
/// to another (`claude mcp add … -- /path/to/copilot-ls mcp`); a bare `copilot-ls` further
/// on is a name (`acpx copilot-ls …`), not the binary.
fn copilot_args(words: &[String]) -> Option<&[String]> {
    let at = match words.first() {
        Some(first) if is_binary(first) => 0,
        _ => words.iter().position(|w| w.contains('/') && is_binary(w))?,
    };
    Some(&words[at + 1..])
}

/// The checks of the docs, and what they found.
#[derive(Default)]
struct Report {
    cli: Cli,
    problems: Vec<String>,
    invocations: usize,
    links: usize,
    paths: usize,
    /// (where, arguments) of the fenced shell blocks' `copilot-ls` commands.
    runnable: Vec<(String, Vec<String>)>,
}

fn check(docs: impl IntoIterator<Item = (String, String)>) -> Report {
    let mut report = Report {
        cli: cli(),
        ..Report::default()
    };
    for (doc, text) in docs {
        report.doc(&doc, &text);
    }
    report
}

impl Report {
    fn doc(&mut self, doc: &str, text: &str) {
        let (mut fence, mut pending, mut code, mut config) = (None::<String>, None, None, vec![]);
        for (n, raw) in (1..).zip(text.lines()) {
            let line = raw.trim_start();
            if let Some(info) = line.strip_prefix("```") {
                if fence.take().is_none() {
                    fence = Some(info.split_whitespace().next().unwrap_or("").to_string());
                }
                self.config(doc, &std::mem::take(&mut config));
                continue;
            }
            match fence.as_deref() {
                Some(lang) if SHELL.contains(&lang) => {
                    // A `$ ` prompt is dropped; a line ending in `\` goes on on the next.
                    let (at, mut command) = pending.take().unwrap_or((n, String::new()));
                    command.push_str(line.strip_prefix("$ ").unwrap_or(line));
                    match command.strip_suffix('\\') {
                        Some(head) => pending = Some((at, head.to_string())),
                        None => self.shell(&format!("{doc}:{at}"), &command, true),
                    }
                }
                Some(lang) if CONFIG.contains(&lang) => config.extend(config_words(n, raw)),
                Some(_) => {}
                None if raw.trim().is_empty() => code = None, // a span ends with its paragraph
                None => self.prose(doc, n, raw, &mut code),
            }
        }
    }

    /// A prose line's inline code spans (`code` holds one that the paragraph's previous
    /// line left open) and the links outside them.
    fn prose(&mut self, doc: &str, n: usize, raw: &str, code: &mut Option<(usize, String)>) {
        for (i, piece) in raw.split('`').enumerate() {
            if i > 0 {
                match code.take() {
                    Some((at, text)) => self.shell(&format!("{doc}:{at}"), &text, false),
                    None => *code = Some((n, String::new())),
                }
            }
            if let Some((_, text)) = code {
                text.push(' ');
                text.push_str(piece);
                continue;
            }
            let mut rest = piece;
            while let Some((_, after)) = rest.split_once("](") {
                let (target, tail) = after.split_once(')').unwrap_or((after, ""));
                self.link(doc, n, target.split_whitespace().next().unwrap_or(""));
                rest = tail;
            }
        }
    }

    /// A shell line or inline code span: its paths and its `copilot-ls` commands (in inline
    /// code the bare binary, `copilot-ls` or `~/.cache/copilot-ls`, is a name).
    fn shell(&mut self, at: &str, text: &str, fenced: bool) {
        for words in commands(text) {
            self.paths(at, &words);
            let documented = copilot_args(&words).filter(|args| fenced || !args.is_empty());
            let Some(args) = documented else { continue };
            self.invocation(at, args);
            if fenced {
                self.runnable.push((at.to_string(), args.to_vec()));
            }
        }
    }

    /// An editor configuration's `copilot-ls` calls: a `command` (or `path`) value naming
    /// the binary, with its own words and then those of the next `args` list.
    fn config(&mut self, doc: &str, words: &[(usize, String)]) {
        let keys = ["args", "arguments", "command-params"];
        for (i, pair) in words.windows(2).enumerate() {
            let mut args: Vec<&str> = pair[1].1.split_whitespace().collect();
            let key = ["command", "path"].contains(&pair[0].1.as_str());
            if !key || !args.first().is_some_and(|first| is_binary(first)) {
                continue;
            }
            // The list's words come after its key and its `{`.
            let list = words[i..].iter().skip_while(|w| !keys.contains(&&*w.1));
            args.extend(list.skip(2).map(|w| w.1.as_str()).take_while(|w| *w != "}"));
            let args: Vec<String> = args[1..].iter().map(|a| a.to_string()).collect();
            self.invocation(&format!("{doc}:{}", pair[1].0), &args);
        }
    }

    fn invocation(&mut self, at: &str, args: &[String]) {
        self.invocations += 1;
        let shown = format!("{at}: `copilot-ls {}`", args.join(" "));
        // The top level takes no values: its first word that is not a flag is the subcommand.
        let sub = args.iter().position(|w| !w.starts_with('-'));
        let name = sub.map_or("", |s| args[s].as_str());
        if !self.cli.contains_key(name) {
            let problem = format!("{shown}: no subcommand `{name}`");
            return self.problems.push(problem);
        }
        let mut words = args.iter().enumerate();
        while let Some((i, word)) = words.next().filter(|(_, w)| w.as_str() != "--") {
            let scope = sub.filter(|&s| i > s).map_or("", |_| name);
            let Some(flag) = word.split('=').next().filter(|_| word.starts_with('-')) else {
                continue;
            };
            match self.cli[scope].get(flag) {
                Some(true) if !word.contains('=') => _ = words.next(), // its value
                Some(_) => {}
                None => {
                    let help = format!("copilot-ls {scope} --help").replace("  ", " ");
                    let problem = format!("{shown}: `{help}` has no {flag}");
                    self.problems.push(problem);
                }
            }
        }
    }

    /// The repository paths a command names: a word under a top-level directory (a
    /// script to run, a file to open, a `--workspace`), or a cargo `--example`/`--test`.
    fn paths(&mut self, at: &str, words: &[String]) {
        let mut paths = BTreeSet::new();
        if words[0] == "cargo" {
            let value = |flag| words.iter().skip_while(|w| *w != flag).nth(1);
            paths.extend(value("--example").map(|name| format!("server/examples/{name}.rs")));
            paths.extend(value("--test").map(|name| format!("tests/{name}.rs")));
        }
        for word in words.iter().map(|w| w.trim_start_matches("./")) {
            let top = word.split('/').next().unwrap();
            if word.contains('/') && TOP_DIRS.contains(&top) && !NOT_PATHS.contains(&word) {
                // `path:line` and `path:start-end` name the file.
                let digits = |l: &str| l.chars().all(|c| c.is_ascii_digit() || c == '-');
                let line = word.rsplit_once(':').filter(|(_, l)| digits(l));
                paths.insert(line.map_or(word, |(path, _)| path).to_string());
            }
        }
        for path in paths.iter().filter(|p| !p.contains(['*', '…', '{', '<'])) {
            self.paths += 1;
            if !Path::new(REPO).join(path).exists() {
                self.problems.push(format!("{at}: `{path}` does not exist"));
            }
        }
    }

    fn link(&mut self, doc: &str, n: usize, target: &str) {
        let path = target.split('#').next().unwrap();
        if path.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            return;
        }
        // A clone holds the repository only: a link out of it leads nowhere.
        let ups = path.split('/').take_while(|part| *part == "..").count();
        if ups > doc.matches('/').count() {
            let problem = format!("{doc}:{n}: link target {path} leaves the repository");
            self.problems.push(problem);
            return;
        }
        self.links += 1;
        if !Path::new(REPO).join(doc).with_file_name(path).exists() {
            let problem = format!("{doc}:{n}: link target {path} does not exist");
            self.problems.push(problem);
        }
    }
}

/// Runs the shell blocks' one-shot commands (not the servers) in a scratch directory with
/// a copy of `fixtures/workspace`, which stands in for `DIR` and the reader's `~/src/…`
/// too. No provider (so no network), the cache in a temp dir; nothing there may change.
fn run_documented(runnable: &[(String, Vec<String>)]) -> (usize, Vec<String>) {
    let (root, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ws = root.path().join("fixtures/workspace");
    copy_dir(&fixtures_dir().join("workspace"), &ws);
    let before = snapshot(root.path());
    // An all-caps word of a usage line: `DIR`, `N` (2 here), `QUESTION` (a question).
    let placeholder = |w: &str| w.chars().all(|c| c.is_ascii_uppercase() || c == '_');
    let (mut ran, mut problems) = (0, Vec::new());
    for (at, words) in runnable {
        // `--version`, `--help`, `ask`, `index`, `tool`; the top level's flags are checked.
        let sub = words.iter().find(|w| !w.starts_with('-'));
        let one_shot = |sub: &String| ["ask", "index", "tool"].contains(&sub.as_str());
        if !sub.map_or(!words.is_empty(), one_shot) {
            continue;
        }
        let dir = |i: usize| i > 0 && words[i - 1] == "--workspace";
        let args: Vec<String> = (0..words.len())
            .map(|i| match words[i].as_str() {
                w if dir(i) && (placeholder(w) || w.starts_with('~')) => ws.display().to_string(),
                "N" => "2".to_string(),
                w if placeholder(w) || w.contains('…') => "How are tokens refilled?".into(),
                w => w.to_string(),
            })
            .collect();
        let mut command = Command::new(BIN);
        command.args(&args).current_dir(root.path()).env_clear();
        command.env("PATH", std::env::var("PATH").unwrap_or_default());
        command.env("HOME", cache.path());
        command.env("COPILOT_LS_CACHE_DIR", cache.path());
        command.env("COPILOT_LS_PROVIDER", "none");
        ran += 1;
        let shown = format!("{at}: `copilot-ls {}`", args.join(" "));
        match run_bounded(command, LIMIT) {
            Some(run) if run.code == Some(0) => {}
            Some(run) => problems.push(format!("{shown} exited {:?}: {}", run.code, run.stderr)),
            None => problems.push(format!("{shown} did not exit within {LIMIT:?}")),
        }
    }
    if snapshot(root.path()) != before {
        problems.push("the documented commands wrote into the workspace".to_string());
    }
    (ran, problems)
}

#[test]
fn every_documented_command_flag_path_and_link_matches_the_repository() {
    let report = check(docs());
    let (ran, run_problems) = run_documented(&report.runnable);
    let problems = report.problems.iter().chain(&run_problems);
    let problems: String = problems.map(|p| format!("\n  {p}")).collect();
    assert!(problems.is_empty(), "docs disagree:{problems}");
    // A parser that stopped seeing the docs would pass vacuously.
    let (invocations, links, paths) = (report.invocations, report.links, report.paths);
    let counts = format!("{invocations} invocations, {links} links, {paths} paths, {ran} runs");
    let enough = invocations >= 50 && links >= 25 && paths >= 90 && ran >= 7;
    assert!(enough, "{counts}");
    eprintln!("checked {counts}");
}

#[test]
fn a_doc_naming_what_does_not_exist_is_reported_at_its_line() {
    let markdown = "# Use\n\n```sh\n$ copilot-ls ask --no-such-flag \\\n    \"q\"\n\
        copilot-ls frobnicate  # gone\nbash scripts/no-such.sh\n```\n\nRun `copilot-ls index\n\
        --jsn` or open [it](no-such.md) or [the contract](../../shared/PROTOCOL.md).\n\n```json\n\
        { \"command\": \"/path/to/copilot-ls\", \"args\": [\"mcp\", \"--workspaces\", \"x\"] }\n```\n";
    let report = check([("docs/scratch.md".into(), markdown.into())]);
    let expected = [
        "docs/scratch.md:4: `copilot-ls ask --no-such-flag q`: `copilot-ls ask --help` has no --no-such-flag",
        "docs/scratch.md:6: `copilot-ls frobnicate`: no subcommand `frobnicate`",
        "docs/scratch.md:7: `scripts/no-such.sh` does not exist",
        "docs/scratch.md:10: `copilot-ls index --jsn`: `copilot-ls index --help` has no --jsn",
        "docs/scratch.md:11: link target no-such.md does not exist",
        "docs/scratch.md:11: link target ../../shared/PROTOCOL.md leaves the repository",
        "docs/scratch.md:14: `copilot-ls mcp --workspaces x`: `copilot-ls mcp --help` has no --workspaces",
    ];
    assert_eq!(report.problems, expected);
}

#[test]
fn the_readme_first_screen_names_the_prerequisites_and_the_two_commands() {
    // What a newcomer reads before scrolling: what to have, how to build and ask, how to
    // run the tests; nothing of it below a screenshot or a screen dump.
    let readme = std::fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let first_screen: String = readme.lines().take(40).collect::<Vec<_>>().join("\n");
    for needed in [
        "Rust 1.88",
        "C compiler",
        "Python 3",
        "sudo",
        "GB of disk",
        "cargo build --release && ./target/release/copilot-ls ask",
        "bash scripts/test.sh",
    ] {
        assert!(
            first_screen.contains(needed),
            "README's first 40 lines do not say {needed:?}"
        );
    }
    assert!(
        !first_screen.contains("!["),
        "a picture before the commands"
    );
    // The README is the first screen and the map; reference material lives in docs/
    // (issue #55 item 18: the limit is 300 lines).
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; move reference material to docs/"
    );
    // The stated minimum is the one Cargo.toml enforces.
    let manifest = std::fs::read_to_string(Path::new(REPO).join("Cargo.toml")).unwrap();
    assert!(manifest.contains("rust-version = \"1.88\""), "{manifest}");
}

/// The release archive ships without the repository around it: its README is one written
/// for it, and every relative link in its Markdown resolves inside it (issue #55, item 15).
/// `scripts/package.sh --docs-only` lays out exactly the text every archive is built from.
#[test]
fn every_link_in_the_release_archive_resolves_inside_it() {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new("bash")
        .arg(format!("{REPO}/scripts/package.sh"))
        .arg("--docs-only")
        .arg(out.path())
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let folder = out.path().join("copilot-ls");
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(readme.contains("copilot-ls ask --workspace"), "{readme}");
    assert!(folder.join("nvim/lua/copilot_ls").is_dir());
    assert!(!folder.join("nvim/test").exists());
    // The checker finds what it is there for: the repository's own README, alone, has
    // links into docs/ and the sources that a bare archive lacks.
    let bare = tempfile::tempdir().unwrap();
    std::fs::copy(format!("{REPO}/README.md"), bare.path().join("README.md")).unwrap();
    let checked = Command::new("python3")
        .arg(format!("{REPO}/scripts/check_links.py"))
        .arg(bare.path())
        .output()
        .unwrap();
    assert!(!checked.status.success());
    assert!(String::from_utf8_lossy(&checked.stderr).contains("broken link: README.md:"));
}
