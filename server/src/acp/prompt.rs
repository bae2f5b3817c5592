//! A `session/prompt`'s content blocks as one ask: text blocks form the question;
//! `resource` blocks (an embedded file or selection) and `resource_link` blocks are the
//! context the user attached, quoted after the question so the model starts from them.
//! The first attached file is also the ask's focus (it steers retrieval). Text is
//! bounded like resources, with the same kind of note; a block we cannot read (an
//! image, audio) is named, to the user and to the model, never dropped silently.

use crate::text::prefix_within;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

use crate::session::AskRequest;
use crate::text;

/// Most text quoted from one embedded resource, and from all of them: the model can
/// read the rest with its tools.
const MAX_RESOURCE_BYTES: usize = 32 * 1024;
const MAX_CONTEXT_BYTES: usize = 96 * 1024;
/// Most text of a prompt's own text blocks: a pasted log of megabytes would only
/// crowd out the code (the provider has a context limit anyway).
const MAX_TEXT_BYTES: usize = 1024 * 1024;

/// The note after a cut text, naming the limit.
fn cut_note(limit: usize, rest: &str) -> String {
    format!("(cut off at {} KiB{rest})", limit / 1024)
}

/// One prompt, ready to ask.
#[derive(Debug)]
pub struct Prompt {
    pub ask: AskRequest,
    /// The user's own words (the text blocks, as bounded): the question a transcript
    /// shows, and what a slash command is read from.
    pub text: String,
    /// Blocks that were not passed on, by kind (`image`, `audio`).
    pub left_out: Vec<&'static str>,
    /// The files the client attached (it has them open).
    pub attached: Vec<PathBuf>,
}

/// What the user attached, as the model is told about it.
#[derive(Debug, PartialEq, Eq)]
struct Attachment {
    /// The shown path for files inside a root, else the URI as given.
    shown: String,
    /// The file URI without its fragment, when it is a file.
    file_uri: Option<String>,
    /// 1-based lines from the URI's `#L12` / `#L12-20` / `#L12:20` fragment.
    lines: Option<(u32, u32)>,
    text: Option<String>,
}

/// The ask for one prompt, in conversation `conversation_id`. An error names what is
/// wrong with a prompt that asks nothing.
pub fn ask_request(
    blocks: &[ContentBlock],
    shown: &dyn Fn(&Path) -> String,
    conversation_id: &str,
) -> Result<Prompt, String> {
    let mut question = String::new();
    let mut attachments = Vec::new();
    let mut left_out = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(content) => {
                if !question.is_empty() {
                    question.push('\n');
                }
                question.push_str(&content.text);
            }
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(resource) => {
                    attachments.push(attachment(
                        &resource.uri,
                        shown,
                        Some(resource.text.clone()),
                    ));
                }
                // Binary content is of no use to the model; the file's name still is.
                EmbeddedResourceResource::BlobResourceContents(resource) => {
                    attachments.push(attachment(&resource.uri, shown, None));
                }
                _ => {}
            },
            ContentBlock::ResourceLink(link) => {
                attachments.push(attachment(&link.uri, shown, None))
            }
            // Images and audio are not advertised in promptCapabilities; a client may
            // send them anyway.
            ContentBlock::Image(_) => left_out.push("image"),
            ContentBlock::Audio(_) => left_out.push("audio"),
            _ => left_out.push("content block"),
        }
    }
    let mut question = question.trim().to_string();
    if question.len() > MAX_TEXT_BYTES {
        let kept = prefix_within(&question, MAX_TEXT_BYTES).len();
        question.truncate(kept);
        question.push('\n');
        question.push_str(&cut_note(
            MAX_TEXT_BYTES,
            "; the rest of the prompt was not sent",
        ));
    }
    if question.is_empty() && attachments.is_empty() {
        let mut reason = "the prompt has no text and no resources".to_string();
        if !left_out.is_empty() {
            reason.push_str(&format!(
                " (copilot-ls does not read its {})",
                left_out.join(", ")
            ));
        }
        return Err(reason);
    }
    let mut full = if question.is_empty() {
        "Explain the context I attached.".to_string()
    } else {
        question.clone()
    };
    if !left_out.is_empty() {
        let _ = write!(
            full,
            "\n\n(The user also attached: {}. You cannot see it; say so if it matters.)",
            left_out.join(", ")
        );
    }
    if !attachments.is_empty() {
        full.push_str("\n\n");
        full.push_str(&render_attachments(&attachments));
    }
    let attached = attachments
        .iter()
        .filter_map(|a| a.file_uri.as_deref().and_then(text::path_from_file_uri))
        .collect();
    Ok(Prompt {
        ask: AskRequest {
            question: full,
            conversation_id: Some(conversation_id.to_string()),
            document_uri: attachments.iter().find_map(|a| a.file_uri.clone()),
            selection: None,
            persist_as: None,
            options: Default::default(),
            // Parsed as it arrived, before the turn's first await.
            arrival: Some(crate::session::arrival()),
            editor_model: None,
        },
        text: question,
        left_out,
        attached,
    })
}

fn attachment(uri: &str, shown: &dyn Fn(&Path) -> String, text: Option<String>) -> Attachment {
    let (base, fragment) = match uri.split_once('#') {
        Some((base, fragment)) => (base, Some(fragment)),
        None => (uri, None),
    };
    let path = text::path_from_file_uri(base);
    let shown = match &path {
        Some(path) => shown(path),
        None => uri.to_string(),
    };
    Attachment {
        shown,
        file_uri: path.is_some().then(|| base.to_string()),
        lines: fragment.and_then(line_range),
        text,
    }
}

/// `path` as the workspace's paths are shown (`<root name>/…` with several roots), or as
/// it is when outside every root.
pub fn shown_in(path: &Path, sandbox: &crate::workspace::sandbox::Sandbox) -> String {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    sandbox
        .relative(&canonical)
        .or_else(|| sandbox.relative(path))
        .unwrap_or_else(|| path.display().to_string())
}

/// `path` relative to the root with `/` separators, or as it is when outside.
#[cfg(test)]
fn relative_to(path: &Path, root: &Path) -> String {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    match canonical
        .strip_prefix(root)
        .or_else(|_| path.strip_prefix(root))
    {
        Ok(relative) => relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.display().to_string(),
    }
}

/// Lines from a fragment as editors write them: `L12`, `L12-20`, `L12-L20`, `L12:20`
/// (Zed's selections), with an optional `,column` / `Ccolumn` after a line.
fn line_range(fragment: &str) -> Option<(u32, u32)> {
    let rest = fragment.strip_prefix('L')?;
    let mut parts = rest.splitn(2, ['-', ':']);
    let number = |part: &str| -> Option<u32> {
        let part = part.trim_start_matches('L');
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok().filter(|n| *n > 0)
    };
    let start = number(parts.next()?)?;
    let end = parts.next().and_then(number).unwrap_or(start);
    Some((start, end.max(start)))
}

fn render_attachments(attachments: &[Attachment]) -> String {
    let mut out = String::from("Context I attached:\n");
    let mut budget = MAX_CONTEXT_BYTES;
    for attachment in attachments {
        let lines = match attachment.lines {
            Some((start, end)) if start == end => format!(" (line {start})"),
            Some((start, end)) => format!(" (lines {start}-{end})"),
            None => String::new(),
        };
        match &attachment.text {
            Some(text) if budget > 0 => {
                let limit = MAX_RESOURCE_BYTES.min(budget);
                let quoted = prefix_within(text, limit);
                budget -= quoted.len();
                let fence = fence_for(quoted);
                let _ = writeln!(out, "\n{}{lines}:", attachment.shown);
                let _ = writeln!(out, "{fence}\n{}\n{fence}", quoted.trim_end_matches('\n'));
                if quoted.len() < text.len() {
                    let _ = writeln!(out, "{}", cut_note(limit, "; read the file for the rest"));
                }
            }
            _ => {
                let _ = writeln!(
                    out,
                    "\n{}{lines} (not quoted; read it with your tools)",
                    attachment.shown
                );
            }
        }
    }
    out
}

/// A code fence longer than any run of backticks in the quoted text.
pub(super) fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ResourceLink, TextContent, TextResourceContents,
    };

    #[test]
    fn fragments_give_lines() {
        assert_eq!(line_range("L12"), Some((12, 12)));
        assert_eq!(line_range("L12-20"), Some((12, 20)));
        assert_eq!(line_range("L12-L20"), Some((12, 20)));
        assert_eq!(line_range("L12:20"), Some((12, 20)));
        assert_eq!(line_range("L3,4-L5,1"), Some((3, 5)));
        assert_eq!(line_range("top"), None);
        assert_eq!(line_range("L0"), None);
    }

    #[test]
    fn text_is_the_question_and_resources_are_quoted_context() {
        let root = Path::new("/work/project");
        let blocks = vec![
            ContentBlock::Text(TextContent::new("What does this do?")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}\n",
                    "file:///work/project/src/main.rs#L1:1",
                )),
            )),
            ContentBlock::ResourceLink(ResourceLink::new(
                "lib.rs",
                "file:///work/project/src/lib.rs",
            )),
        ];
        let request = ask_request(&blocks, &|p| relative_to(p, root), "conversation-1")
            .unwrap()
            .ask;
        assert!(request
            .question
            .starts_with("What does this do?\n\nContext I attached:\n"));
        assert!(request
            .question
            .contains("src/main.rs (line 1):\n```\nfn main() {}\n```"));
        assert!(request
            .question
            .contains("src/lib.rs (not quoted; read it with your tools)"));
        assert_eq!(
            request.document_uri.as_deref(),
            Some("file:///work/project/src/main.rs")
        );
        assert_eq!(request.conversation_id.as_deref(), Some("conversation-1"));
    }

    #[test]
    fn an_empty_prompt_is_refused_and_a_bare_resource_is_explained() {
        assert!(ask_request(&[], &|p| relative_to(p, Path::new("/")), "c").is_err());
        let blocks = vec![ContentBlock::ResourceLink(ResourceLink::new(
            "x",
            "file:///x.rs",
        ))];
        let request = ask_request(&blocks, &|p| relative_to(p, Path::new("/")), "c")
            .unwrap()
            .ask;
        assert!(request
            .question
            .starts_with("Explain the context I attached."));
    }

    #[test]
    fn long_text_is_cut_with_a_note_and_images_are_named() {
        use agent_client_protocol::v1::schema::ImageContent;
        let blocks = vec![
            ContentBlock::Text(TextContent::new("q".repeat(3 * MAX_TEXT_BYTES))),
            ContentBlock::Image(ImageContent::new("AAAA", "image/png")),
        ];
        let prompt = ask_request(&blocks, &|p| relative_to(p, Path::new("/")), "c").unwrap();
        assert!(prompt.ask.question.len() < MAX_TEXT_BYTES + 1024);
        assert!(prompt.ask.question.contains("(cut off at 1024 KiB"));
        assert!(prompt
            .ask
            .question
            .contains("The user also attached: image."));
        assert_eq!(prompt.left_out, vec!["image"]);
        let only_image = vec![ContentBlock::Image(ImageContent::new("AAAA", "image/png"))];
        let refused =
            ask_request(&only_image, &|p| relative_to(p, Path::new("/")), "c").unwrap_err();
        assert!(refused.contains("image"), "{refused}");
    }

    #[test]
    fn quotes_are_bounded_and_fenced_past_backticks() {
        let text = "```\n".repeat(20_000);
        let attachments = [Attachment {
            shown: "big.md".into(),
            file_uri: None,
            lines: None,
            text: Some(text),
        }];
        let out = render_attachments(&attachments);
        assert!(out.len() < MAX_RESOURCE_BYTES + 200, "{}", out.len());
        assert!(out.contains("````\n"));
        assert!(out.contains("(cut off at 32 KiB; read the file for the rest)"));
    }
}
