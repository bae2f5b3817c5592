//! A `session/prompt`'s content blocks as one ask: text blocks form the question;
//! `resource` blocks (an embedded file or selection) and `resource_link` blocks are the
//! context the user attached, quoted after the question so the model starts from them.
//! The first attached file is also the ask's focus (it steers retrieval).

use crate::text::prefix_within;
use std::fmt::Write as _;
use std::path::Path;

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

use crate::session::AskRequest;
use crate::text;

/// Most text quoted from one embedded resource, and from all of them: the model can
/// read the rest with its tools.
const MAX_RESOURCE_BYTES: usize = 32 * 1024;
const MAX_CONTEXT_BYTES: usize = 96 * 1024;

/// What the user attached, as the model is told about it.
#[derive(Debug, PartialEq, Eq)]
struct Attachment {
    /// Workspace-relative path for files inside the root, else the URI as given.
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
    root: &Path,
    conversation_id: &str,
) -> Result<AskRequest, String> {
    let mut question = String::new();
    let mut attachments = Vec::new();
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
                    attachments.push(attachment(&resource.uri, root, Some(resource.text.clone())));
                }
                // Binary content is of no use to the model; the file's name still is.
                EmbeddedResourceResource::BlobResourceContents(resource) => {
                    attachments.push(attachment(&resource.uri, root, None));
                }
                _ => {}
            },
            ContentBlock::ResourceLink(link) => attachments.push(attachment(&link.uri, root, None)),
            // Images and audio are not advertised in promptCapabilities.
            _ => {}
        }
    }
    let question = question.trim().to_string();
    if question.is_empty() && attachments.is_empty() {
        return Err("the prompt has no text and no resources".to_string());
    }
    let mut full = if question.is_empty() {
        "Explain the context I attached.".to_string()
    } else {
        question
    };
    if !attachments.is_empty() {
        full.push_str("\n\n");
        full.push_str(&render_attachments(&attachments));
    }
    Ok(AskRequest {
        question: full,
        conversation_id: Some(conversation_id.to_string()),
        document_uri: attachments.iter().find_map(|a| a.file_uri.clone()),
        selection: None,
    })
}

fn attachment(uri: &str, root: &Path, text: Option<String>) -> Attachment {
    let (base, fragment) = match uri.split_once('#') {
        Some((base, fragment)) => (base, Some(fragment)),
        None => (uri, None),
    };
    let path = text::path_from_file_uri(base);
    let shown = match &path {
        Some(path) => relative_to(path, root),
        None => uri.to_string(),
    };
    Attachment {
        shown,
        file_uri: path.is_some().then(|| base.to_string()),
        lines: fragment.and_then(line_range),
        text,
    }
}

/// `path` relative to the root with `/` separators, or as it is when outside.
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
                    let _ = writeln!(out, "(cut off; read the file for the rest)");
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
fn fence_for(text: &str) -> String {
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
        let request = ask_request(&blocks, root, "conversation-1").unwrap();
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
        assert!(ask_request(&[], Path::new("/"), "c").is_err());
        let blocks = vec![ContentBlock::ResourceLink(ResourceLink::new(
            "x",
            "file:///x.rs",
        ))];
        let request = ask_request(&blocks, Path::new("/"), "c").unwrap();
        assert!(request
            .question
            .starts_with("Explain the context I attached."));
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
        assert!(out.contains("(cut off; read the file for the rest)"));
    }
}
