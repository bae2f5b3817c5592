//! Answers must not smuggle anything into the editor: remote images and links (and
//! links with any URI scheme, such as VS Code's `command:`) are turned into plain text
//! before the markdown reaches a renderer. Workspace-relative links are kept.
//!
//! Streamed text goes through the same rules line by line (`StreamSanitizer`): what
//! precedes a line's first `!`, `[` or `<` leaves at once; from there on the line waits
//! until it is complete, because only then can a link be told from a bracket.

/// Rewrites `![alt](url)`, `[text](url)`, `<url>` autolinks, reference definitions and
/// raw HTML media/link tags so that nothing remote is fetched or clickable. Fenced code
/// blocks are left alone: renderers show them as text anyway.
pub fn neutralize_remote_content(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut in_fence = false;
    for line in markdown.split_inclusive('\n') {
        out.push_str(&sanitize_line(line, &mut in_fence));
    }
    out
}

fn neutralize_inline(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(pos) = rest.find(['!', '[', '<']) {
        out.push_str(&rest[..pos]);
        rest = &rest[pos..];
        if let Some((consumed, replacement)) = link_at(rest).or_else(|| angle_at(rest)) {
            out.push_str(&replacement);
            rest = &rest[consumed..];
        } else {
            let c = rest.chars().next().unwrap_or('!');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out.push_str(rest);
    out
}

fn has_scheme(target: &str) -> bool {
    let target = target.trim().trim_start_matches('<');
    match target.find(':') {
        Some(colon) => {
            let scheme = &target[..colon];
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => target.starts_with("//"),
    }
}

/// `![alt](target)` or `[text](target)` at the start of `text`.
fn link_at(text: &str) -> Option<(usize, String)> {
    let image = text.starts_with("![");
    let open = if image { 1 } else { 0 };
    if !text[open..].starts_with('[') {
        return None;
    }
    let close = text[open..].find("](")? + open;
    let label = &text[open + 1..close];
    if label.contains('\n') {
        return None;
    }
    let target_start = close + 2;
    let target_len = text[target_start..].find(')')?;
    let target = &text[target_start..target_start + target_len];
    if target.contains('\n') {
        return None;
    }
    let consumed = target_start + target_len + 1;
    if !image && !has_scheme(target) {
        return None; // a workspace-relative link: keep it
    }
    let shown = target.trim().replace('`', "'");
    let replacement = if image {
        format!("{} (image not loaded: `{shown}`)", label.trim())
    } else {
        format!("{} (`{shown}`)", label.trim())
    };
    Some((consumed, replacement))
}

/// `<https://…>` autolinks and raw HTML tags such as `<img src=…>`.
fn angle_at(text: &str) -> Option<(usize, String)> {
    let rest = text.strip_prefix('<')?;
    let end = rest.find('>')?;
    let inner = &rest[..end];
    if inner.contains('\n') || inner.is_empty() {
        return None;
    }
    if has_scheme(inner) && !inner.contains(' ') {
        return Some((end + 2, format!("`{}`", inner.replace('`', "'"))));
    }
    // Raw HTML that loads or links something: escape it so it shows as text.
    const TAGS: &[&str] = &[
        "img", "a", "iframe", "script", "video", "audio", "source", "link", "object", "embed",
        "style", "svg", "picture", "form", "meta",
    ];
    let name: String = inner
        .trim_start_matches('/')
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    if TAGS.contains(&name.as_str()) {
        return Some((end + 2, format!("&lt;{inner}&gt;")));
    }
    None
}

/// `[ref]: https://…` definitions would turn `[ref]` into a remote link.
fn neutralize_reference_definition(line: &str) -> String {
    let newline = if line.ends_with('\n') { "\n" } else { "" };
    let trimmed = line.trim_start().trim_end_matches('\n');
    if trimmed.starts_with('[') {
        if let Some(close) = trimmed.find("]:") {
            let target = trimmed[close + 2..].trim();
            if has_scheme(target) {
                let label = trimmed[..close + 1].replacen('[', "\\[", 1);
                return format!("{label} `{}`{newline}", target.replace('`', "'"));
            }
        }
    }
    line.to_string()
}

/// Sanitizes text that arrives in pieces, emitting as much as is already safe.
#[derive(Debug, Default)]
pub struct StreamSanitizer {
    /// The current, unfinished line.
    line: String,
    /// How many bytes of `line` were already emitted.
    emitted: usize,
    in_fence: bool,
}

impl StreamSanitizer {
    /// Takes the next piece; returns the text that may be shown now.
    pub fn push(&mut self, piece: &str) -> String {
        let mut out = String::new();
        let mut rest = piece;
        while let Some(newline) = rest.find('\n') {
            self.line.push_str(&rest[..=newline]);
            rest = &rest[newline + 1..];
            out.push_str(&self.complete_line());
        }
        self.line.push_str(rest);
        let safe = self.safe_prefix();
        if safe > self.emitted {
            out.push_str(&self.line[self.emitted..safe]);
            self.emitted = safe;
        }
        out
    }

    /// Ends the text: the last line is complete.
    pub fn finish(&mut self) -> String {
        if self.line.is_empty() {
            return String::new();
        }
        self.complete_line()
    }

    /// How much of the unfinished line cannot change however it ends.
    fn safe_prefix(&self) -> usize {
        if self.in_fence {
            return self.line.len();
        }
        let trimmed = self.line.trim_start();
        // Leading blanks wait for the first character: a reference definition drops them.
        if trimmed.is_empty() || trimmed.starts_with('[') {
            return 0;
        }
        // The first character that may open a link or a tag; `!` not before `[` and `<`
        // before a blank (`a < b`) cannot.
        let bytes = self.line.as_bytes();
        for (at, &byte) in bytes.iter().enumerate() {
            let next = bytes.get(at + 1).copied();
            let opens = match byte {
                b'[' => true,
                b'!' => next.is_none() || next == Some(b'['),
                b'<' => next.is_none_or(|n| !n.is_ascii_whitespace()),
                _ => false,
            };
            if opens {
                return at;
            }
        }
        self.line.len()
    }

    fn complete_line(&mut self) -> String {
        let line = std::mem::take(&mut self.line);
        let emitted = std::mem::take(&mut self.emitted);
        let sanitized = sanitize_line(&line, &mut self.in_fence);
        // The emitted prefix never changes (see `safe_prefix`); if it somehow did, what
        // was shown stays shown and the final answer, sanitized whole, is authoritative.
        sanitized.get(emitted..).unwrap_or_default().to_string()
    }
}

/// One line (with its `\n`, if any), given whether a code fence is open before it.
fn sanitize_line(line: &str, in_fence: &mut bool) -> String {
    let trimmed = line.trim_start();
    if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
        *in_fence = !*in_fence;
        line.to_string()
    } else if *in_fence {
        line.to_string()
    } else {
        neutralize_reference_definition(&neutralize_inline(line))
    }
}

#[cfg(test)]
mod tests {
    use super::neutralize_remote_content as n;
    use super::StreamSanitizer;

    #[test]
    fn streamed_text_is_sanitized_like_the_whole_and_safe_text_is_not_held() {
        let texts = [
            "see ![x](https://evil/p.png?d=secret) and [docs](https://example.com) now\n",
            "plain words, then <img src=\"https://x/y.png\"> end",
            "  [a]: https://x.y\nnext [rate limit](src/rate_limit.rs) line",
            "```\n![i](https://x)\n```\nafter ![j](https://y)",
            "é ✓ 😀 `a < b` Vec<u8> [x] !done",
            "Done! Really!\n!![x](https://e) < <https://a.b> <\n",
        ];
        for text in texts {
            let chars: Vec<char> = text.chars().collect();
            for piece in [1, 2, 3, 7, 1000] {
                let mut stream = StreamSanitizer::default();
                let mut out = String::new();
                for chunk in chars.chunks(piece) {
                    out.push_str(&stream.push(&chunk.iter().collect::<String>()));
                }
                out.push_str(&stream.finish());
                assert_eq!(out, n(text), "{text:?} in pieces of {piece}");
            }
        }
        let mut stream = StreamSanitizer::default();
        assert_eq!(stream.push("Done! a < b"), "Done! a < b");
        let mut stream = StreamSanitizer::default();
        assert_eq!(stream.push("Tokens refill "), "Tokens refill ");
        assert_eq!(stream.push("in src/a.rs:3 ["), "in src/a.rs:3 ");
        assert_eq!(stream.push("x](https://e)"), "");
        assert_eq!(stream.push(" done\nok"), "x (`https://e`) done\nok");
        let mut fenced = StreamSanitizer::default();
        assert_eq!(fenced.push("```\n![i](h"), "```\n![i](h");
    }

    #[test]
    fn remote_images_and_links_become_text() {
        assert_eq!(
            n("see ![x](https://evil/p.png?d=secret)"),
            "see x (image not loaded: `https://evil/p.png?d=secret`)"
        );
        assert_eq!(
            n("[docs](https://example.com)"),
            "docs (`https://example.com`)"
        );
        assert_eq!(
            n("[run](command:workbench.action.terminal.new)"),
            "run (`command:workbench.action.terminal.new`)"
        );
        assert_eq!(n("<https://x.y>"), "`https://x.y`");
        assert_eq!(
            n("<img src=\"https://x/y.png\">"),
            "&lt;img src=\"https://x/y.png\"&gt;"
        );
        assert_eq!(n("[a]: https://x.y\n"), "\\[a] `https://x.y`\n");
    }

    #[test]
    fn local_links_code_and_comparisons_are_kept() {
        let text = "[rate limit](src/rate_limit.rs) and `a < b` with Vec<u8> [x] !done\n```\n![i](https://x)\n```\n";
        assert_eq!(n(text), text);
    }
}
