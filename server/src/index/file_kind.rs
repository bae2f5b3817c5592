//! What a file, or a part of one, is: source, test, bench, example, changelog, docs,
//! metadata, vendored or generated, judged by its path (`FileKind`), and which lines of
//! a file are a test module (`test_module_ranges`). Ranking demotes what is not the
//! code that answers; the build indexes source first.

/// What a file is, judged by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Source,
    Test,
    Bench,
    Example,
    Changelog,
    /// README, guides, manual pages: prose about the code, often relevant, rarely the
    /// code that answers; demoted like examples, which also show how it is used.
    Docs,
    /// Manifests, lock files, licenses, editor and CI configuration.
    Meta,
    /// Someone else's code copied in (`vendor/`, `third_party/`, `node_modules/`).
    Vendored,
    /// Made by a tool (`*.min.js`, `*_pb2.py`, `*.pb.go`, `dist/`, or a file whose head
    /// says so): its source is elsewhere, and that is what answers.
    Generated,
}

impl FileKind {
    pub fn of_path(path: &str) -> FileKind {
        let lower = path.to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or(&lower);
        let stem = name.split('.').next().unwrap_or(name);
        let dirs: Vec<&str> = lower.split('/').collect();
        let dirs = &dirs[..dirs.len() - 1];
        let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));

        if in_dir(&[
            "vendor",
            "vendored",
            "third_party",
            "thirdparty",
            "third-party",
            "3rdparty",
            "node_modules",
            "bower_components",
            "site-packages",
        ]) {
            return FileKind::Vendored;
        }
        // Minified files, protobuf and other generated code, and bundles built from
        // the sources (UMD/ESM builds of a JavaScript library).
        if name.contains(".min.")
            || name.contains(".umd.")
            || name.contains(".esm.")
            || name.contains(".bundle.")
            || name.contains(".pb.")
            || name.contains(".generated.")
            || name.ends_with(".g.dart")
            || stem.ends_with("_pb2")
            || stem.ends_with("_pb2_grpc")
            || stem.ends_with("_generated")
            || name.ends_with(".map")
            || in_dir(&["dist", "__generated__"])
        {
            return FileKind::Generated;
        }
        // CI, issue templates, editor and tool settings (`.github/`, `.editorconfig`,
        // `.eslintrc.js`): configuration whatever their extension.
        if lower
            .split('/')
            .any(|part| part.starts_with('.') && part != "." && part != "..")
        {
            return FileKind::Meta;
        }
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        // `CHANGES`, `HISTORY.rst`, `NEWS.md`; a module named so (`history.py`, the code
        // of a page's history) is source.
        if matches!(
            stem,
            "changelog" | "changes" | "history" | "news" | "releases" | "release-notes"
        ) && matches!(ext, "" | "md" | "markdown" | "rst" | "txt" | "adoc")
        {
            return FileKind::Changelog;
        }
        // Lock files and the manifests whose extension does not say so (`Cargo.toml`
        // and `package.json` are configuration by extension, below).
        if name.ends_with(".lock")
            || matches!(
                name,
                "package-lock.json"
                    | "go.sum"
                    | "go.mod"
                    | "go.work"
                    | "pom.xml"
                    | "build.gradle"
                    | "build.gradle.kts"
                    | "settings.gradle"
                    | "settings.gradle.kts"
                    | "gemfile"
                    | "cargo.toml.orig"
                    | ".cargo_vcs_info.json"
                    | ".cargo-ok"
            )
            || matches!(ext, "gemspec" | "podspec" | "nuspec" | "csproj" | "spec")
            || stem.starts_with("license")
            || stem.starts_with("copying")
        {
            return FileKind::Meta;
        }
        let test_name = stem.starts_with("test_")
            || stem.ends_with("_test")
            || stem.ends_with("_tests")
            || name.contains(".test.")
            || name.contains(".spec.")
            || stem == "tests"
            || stem == "test";
        if test_name || in_dir(&["test", "tests", "__tests__", "testdata", "spec", "fixtures"]) {
            return FileKind::Test;
        }
        if in_dir(&["bench", "benches", "benchmarks"]) {
            return FileKind::Bench;
        }
        if in_dir(&["example", "examples"]) {
            return FileKind::Example;
        }
        // Prose, and manual pages (`man/tool.1`, `tool.1.txt`).
        let section = |part: &str| part.len() == 1 && part.as_bytes()[0].is_ascii_digit();
        let parts: Vec<&str> = name.split('.').skip(1).collect();
        let man_page = match parts.as_slice() {
            [.., last] if section(last) => true,
            [.., section_part, last] => {
                section(section_part) && matches!(*last, "txt" | "html" | "md" | "in" | "prebuilt")
            }
            _ => false,
        };
        // Java's `package-info.java` and Go's `doc.go` hold a package's documentation
        // by convention, and no code.
        if matches!(ext, "md" | "markdown" | "mdx" | "rst" | "txt" | "adoc")
            || man_page
            || matches!(name, "package-info.java" | "doc.go")
            || in_dir(&["doc", "docs", "man"])
        {
            return FileKind::Docs;
        }
        if matches!(
            ext,
            "toml" | "yml" | "yaml" | "json" | "lock" | "cfg" | "ini"
        ) {
            return FileKind::Meta;
        }
        FileKind::Source
    }
}

/// Line ranges of `#[cfg(test)] mod name {` blocks: from the attribute to the closing
/// brace at the module's own indentation.
pub fn test_module_ranges(lines: &[&str]) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == "#[cfg(test)]" {
            // The module line is the next non-attribute line.
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim_start().starts_with("#[") {
                j += 1;
            }
            if let Some(line) = lines.get(j) {
                let t = line.trim_start();
                let is_mod = t.starts_with("mod ") || t.starts_with("pub mod ");
                if is_mod && t.trim_end().ends_with('{') {
                    let indent = line.len() - t.len();
                    let mut end = j + 1;
                    while end < lines.len() {
                        let l = lines[end];
                        let lt = l.trim_start();
                        if lt.starts_with('}') && l.len() - lt.len() <= indent {
                            break;
                        }
                        end += 1;
                    }
                    ranges.push(i..(end + 1).min(lines.len()));
                    i = end;
                }
            }
        }
        i += 1;
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_paths() {
        assert_eq!(
            FileKind::of_path("src/sync/mpsc/bounded.rs"),
            FileKind::Source
        );
        assert_eq!(FileKind::of_path("tests/crlf.rs"), FileKind::Test);
        assert_eq!(FileKind::of_path("pkg/reader_test.go"), FileKind::Test);
        assert_eq!(FileKind::of_path("web/app.spec.ts"), FileKind::Test);
        assert_eq!(FileKind::of_path("benches/insert.rs"), FileKind::Bench);
        assert_eq!(FileKind::of_path("examples/walk.rs"), FileKind::Example);
        assert_eq!(FileKind::of_path("CHANGELOG.md"), FileKind::Changelog);
        assert_eq!(FileKind::of_path("CHANGES"), FileKind::Changelog);
        assert_eq!(FileKind::of_path("docs/HISTORY.rst"), FileKind::Changelog);
        // Modules named so are code.
        assert_eq!(FileKind::of_path("src/site/history.py"), FileKind::Source);
        assert_eq!(FileKind::of_path("app/news.rb"), FileKind::Source);
        assert_eq!(FileKind::of_path("README.md"), FileKind::Docs);
        assert_eq!(FileKind::of_path("Cargo.lock"), FileKind::Meta);
        assert_eq!(FileKind::of_path("LICENSE-MIT"), FileKind::Meta);
        // Manifests whose extension does not say so.
        for manifest in [
            "go.mod",
            "pom.xml",
            "build.gradle.kts",
            "Gemfile",
            "jq.spec",
        ] {
            assert_eq!(FileKind::of_path(manifest), FileKind::Meta, "{manifest}");
        }
        assert_eq!(FileKind::of_path("src/mod.rs"), FileKind::Source);
        // Files that hold a package's documentation by convention.
        for docs in ["src/main/java/org/jsoup/safety/package-info.java", "doc.go"] {
            assert_eq!(FileKind::of_path(docs), FileKind::Docs, "{docs}");
        }
        assert_eq!(FileKind::of_path("lib/parser.spec.js"), FileKind::Test);
        // A word inside a file name is not a directory.
        assert_eq!(FileKind::of_path("src/testing.rs"), FileKind::Source);
        // Tool settings, whatever their extension.
        for meta in [
            ".editorconfig",
            ".all-contributorsrc",
            ".eslintrc.js",
            ".github/labeler.yml",
            "web/.storybook/main.ts",
        ] {
            assert_eq!(FileKind::of_path(meta), FileKind::Meta, "{meta}");
        }
        // Manual pages.
        for docs in [
            "man/marked.1",
            "man/marked.1.txt",
            "jq.1.prebuilt",
            "doc/git.1.in",
        ] {
            assert_eq!(FileKind::of_path(docs), FileKind::Docs, "{docs}");
        }
        assert_eq!(FileKind::of_path("src/v1.rs"), FileKind::Source);
        assert_eq!(FileKind::of_path("src/parser.c"), FileKind::Source);
        for vendored in [
            "vendor/github.com/pkg/errors/errors.go",
            "third_party/zlib/inflate.c",
            "web/node_modules/left-pad/index.js",
            "include/spdlog/fmt/bundled/../../vendor/x.h",
        ] {
            assert_eq!(
                FileKind::of_path(vendored),
                FileKind::Vendored,
                "{vendored}"
            );
        }
        for generated in [
            "static/app.min.js",
            "api/service_pb2.py",
            "api/service_pb2_grpc.py",
            "api/service.pb.go",
            "lib/marked.umd.js",
            "lib/marked.esm.js",
            "dist/index.js",
            "lib/models.g.dart",
        ] {
            assert_eq!(
                FileKind::of_path(generated),
                FileKind::Generated,
                "{generated}"
            );
        }
        assert_eq!(FileKind::of_path("src/protobuf.go"), FileKind::Source);
        assert_eq!(
            FileKind::of_path(".github/ISSUE_TEMPLATE/bug_report.md"),
            FileKind::Meta
        );
        assert_eq!(FileKind::of_path("src/minimal.js"), FileKind::Source);
    }
}
