//! A message's text in the report, as Markdown (pulldown-cmark): paragraphs, emphasis, code,
//! lists, quotes, tables and headings become HTML. Inert by construction: raw HTML in the text
//! is shown as text, a link is its text alone (no `href`: nothing navigates), an image is its
//! alt text (nothing is fetched), and every piece of text passes [`escape_text`]. The elements
//! written are a fixed set, without attributes.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde_json::Value;

use super::html_row::{escape_lines, escape_text};

/// The most bytes of a message rendered (the whole event is in its details).
const TEXT_CAP: usize = 4000;

/// The text of a message event, in any agent's stream: a Claude message's text (its `content`
/// string, or its `text` blocks), a Codex `agent_message`. `None` for any other event.
pub(super) fn message_text(v: &Value) -> Option<String> {
    if let Some(content) = v.pointer("/message/content") {
        let text = match content {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n\n"),
            _ => return None,
        };
        return (!text.trim().is_empty()).then_some(text);
    }
    let item = v.get("item")?;
    (item.get("type").and_then(Value::as_str) == Some("agent_message"))
        .then(|| item.get("text").and_then(Value::as_str).map(str::to_owned))
        .flatten()
        .filter(|t| !t.trim().is_empty())
}

/// Writes `text` as Markdown HTML into `out`, cut at [`TEXT_CAP`] bytes.
pub(super) fn markdown(text: &str, out: &mut String) {
    let text = if text.len() > TEXT_CAP {
        &text[..super::render::floor_char(text, TEXT_CAP)]
    } else {
        text
    };
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH);
    // Inside a table's head, cells are `th`; inside a code block, newlines stay newlines.
    let (mut head, mut code) = (false, false);
    for event in Parser::new_ext(text, options) {
        match event {
            Event::Start(tag) => {
                code |= matches!(tag, Tag::CodeBlock(_));
                out.push_str(open(&tag, &mut head));
            }
            Event::End(tag) => {
                code &= !matches!(tag, TagEnd::CodeBlock);
                out.push_str(close(tag, &mut head));
            }
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) if code => escape_lines(&t, out),
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => escape_text(&t, out),
            Event::Code(t) => {
                out.push_str("<code>");
                escape_text(&t, out);
                out.push_str("</code>");
            }
            Event::SoftBreak => out.push('\n'),
            Event::HardBreak => out.push_str("<br>"),
            Event::Rule => out.push_str("<hr>"),
            Event::TaskListMarker(done) => out.push_str(if done { "[x] " } else { "[ ] " }),
            Event::FootnoteReference(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                escape_text(&t, out)
            }
        }
    }
    if text.len() < TEXT_CAP {
        return;
    }
    out.push_str("<p>…</p>");
}

/// The opening HTML of `tag`: a fixed element, without attributes.
fn open(tag: &Tag<'_>, head: &mut bool) -> &'static str {
    match tag {
        Tag::Paragraph => "<p>",
        Tag::Heading { level, .. } => match level {
            HeadingLevel::H1 | HeadingLevel::H2 => "<h4>",
            HeadingLevel::H3 | HeadingLevel::H4 => "<h5>",
            _ => "<h6>",
        },
        Tag::BlockQuote(_) => "<blockquote>",
        Tag::CodeBlock(_) => "<pre><code>",
        Tag::List(Some(_)) => "<ol>",
        Tag::List(None) => "<ul>",
        Tag::Item => "<li>",
        Tag::Emphasis => "<em>",
        Tag::Strong => "<strong>",
        Tag::Strikethrough => "<del>",
        Tag::Table(_) => "<table>",
        Tag::TableHead => {
            *head = true;
            "<thead><tr>"
        }
        Tag::TableRow => "<tr>",
        Tag::TableCell if *head => "<th>",
        Tag::TableCell => "<td>",
        // A link or an image shows its text; nothing navigates or is fetched.
        Tag::Link { .. } | Tag::Image { .. } => "<u>",
        _ => "<span>",
    }
}

/// The closing HTML of the tag `end` closes, as [`open`] opened it.
fn close(end: TagEnd, head: &mut bool) -> &'static str {
    match end {
        TagEnd::Paragraph => "</p>",
        TagEnd::Heading(level) => match level {
            HeadingLevel::H1 | HeadingLevel::H2 => "</h4>",
            HeadingLevel::H3 | HeadingLevel::H4 => "</h5>",
            _ => "</h6>",
        },
        TagEnd::BlockQuote(_) => "</blockquote>",
        TagEnd::CodeBlock => "</code></pre>",
        TagEnd::List(true) => "</ol>",
        TagEnd::List(false) => "</ul>",
        TagEnd::Item => "</li>",
        TagEnd::Emphasis => "</em>",
        TagEnd::Strong => "</strong>",
        TagEnd::Strikethrough => "</del>",
        TagEnd::Table => "</table>",
        TagEnd::TableHead => {
            *head = false;
            "</tr></thead>"
        }
        TagEnd::TableRow => "</tr>",
        TagEnd::TableCell if *head => "</th>",
        TagEnd::TableCell => "</td>",
        TagEnd::Link | TagEnd::Image => "</u>",
        _ => "</span>",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(text: &str) -> String {
        let mut out = String::new();
        markdown(text, &mut out);
        out
    }

    #[test]
    fn markdown_becomes_fixed_elements() {
        assert_eq!(
            md("# Plan\n\n- **one** `x`\n- two\n\n```\nfn main() {}\n```"),
            "<h4>Plan</h4><ul><li><strong>one</strong> <code>x</code></li><li>two</li></ul>\
             <pre><code>fn main() {}\n</code></pre>"
        );
    }

    /// Raw HTML, links and images from a message are text: nothing runs, navigates or loads.
    #[test]
    fn raw_html_links_and_images_stay_inert() {
        let out = md(
            "<script>alert(1)</script>\n\n[x](javascript:alert(2)) ![y](http://e/t.png) <img src=x onerror=alert(3)>",
        );
        for bad in ["<script", "href", "<img", "javascript:", "http://e"] {
            assert!(!out.contains(bad), "{bad} in {out}");
        }
        assert!(
            out.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{out}"
        );
        assert!(
            out.contains("<u>x</u>") && out.contains("<u>y</u>"),
            "{out}"
        );
    }
}
