//! The content of a neutral message (a string, or a list of OpenAI content parts) read part by
//! part, for the codecs whose wire has parts of its own (Anthropic blocks, Gemini parts).
//!
//! Each text part stays a part of its own (the provider sees two rules, not one glued string),
//! and an `image_url` part (a `data:` URL holding base64, or an http(s) URL; `detail` is a hint
//! those wires have no field for) becomes an [`Image`] each codec writes in its own form. A
//! part that cannot be read is an error naming the message and the part, raised before
//! anything is sent: nothing is dropped on the way.

use super::error::LlmError;
use serde_json::{Map, Value};

/// One part of a message's content.
pub(super) enum Part<'a> {
    /// A text part: its text, and the part itself (for the provider fields it may carry).
    Text(&'a str, Option<&'a Map<String, Value>>),
    Image(Image<'a>),
    /// A part of another type (the codec decides whether its wire takes it).
    Other(&'a str, &'a Value),
}

/// An image, with the media type its data URL (or its `mime_type`, or its URL's file name)
/// gives.
pub(super) enum Image<'a> {
    Base64 {
        media_type: String,
        data: &'a str,
    },
    Url {
        url: &'a str,
        media_type: Option<String>,
    },
}

/// The parts of `content` (of message `index`): a string is one text part, null none.
pub(super) fn parts(content: Option<&Value>, index: usize) -> Result<Vec<Part<'_>>, LlmError> {
    match content {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![Part::Text(s, None)]),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(n, item)| part(item, index, n))
            .collect(),
        Some(other) => Err(LlmError::Request(format!(
            "message {index} has content {other}; expected a string, a list of content parts \
             or null"
        ))),
    }
}

fn part(item: &Value, index: usize, n: usize) -> Result<Part<'_>, LlmError> {
    let bad = |why: &str| LlmError::Request(format!("message {index}, content part {n}: {why}"));
    let Some(object) = item.as_object() else {
        return Err(bad(&format!(
            "expected a part object with a \"type\", got {item}"
        )));
    };
    let Some(kind) = object.get("type").and_then(Value::as_str) else {
        return Err(bad(&format!("a part needs a \"type\", got {item}")));
    };
    match kind {
        "text" => match object.get("text") {
            Some(Value::String(text)) => Ok(Part::Text(text, Some(object))),
            _ => Err(bad("a text part needs a \"text\" string")),
        },
        "image_url" => image(object.get("image_url"))
            .map(Part::Image)
            .map_err(|why| bad(&why)),
        other => Ok(Part::Other(other, item)),
    }
}

/// `image_url` as a string or as `{"url", "detail"?, "mime_type"?}`.
fn image(value: Option<&Value>) -> Result<Image<'_>, String> {
    let (url, mime) = match value {
        Some(Value::String(url)) => (url.as_str(), None),
        Some(Value::Object(o)) => match o.get("url").and_then(Value::as_str) {
            Some(url) => (url, o.get("mime_type").and_then(Value::as_str)),
            None => return Err("an image_url part needs image_url.url".into()),
        },
        _ => return Err("an image_url part needs image_url: {\"url\": ...}".into()),
    };
    if let Some(rest) = url.strip_prefix("data:") {
        let Some((head, data)) = rest.split_once(',') else {
            return Err("the data URL has no ',' before its data".into());
        };
        let mut params = head.split(';');
        let media_type = normal_media_type(params.next().unwrap_or(""));
        if !params.any(|p| p.eq_ignore_ascii_case("base64")) {
            return Err(format!(
                "the data URL of {media_type:?} is not base64 (expected data:<type>;base64,<data>)"
            ));
        }
        if data.is_empty() {
            return Err("the data URL holds no data".into());
        }
        return Ok(Image::Base64 { media_type, data });
    }
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) {
        let shown: String = url.chars().take(40).collect();
        return Err(format!(
            "an image URL must be a data: URL or an http(s) URL, got {shown:?}"
        ));
    }
    let media_type = match mime {
        Some(m) => Some(normal_media_type(m)),
        None => media_type_of_path(url),
    };
    Ok(Image::Url { url, media_type })
}

/// A media type in lower case, with the common misspelling `image/jpg` read as `image/jpeg`.
fn normal_media_type(raw: &str) -> String {
    let lower = raw.trim().to_ascii_lowercase();
    if lower == "image/jpg" {
        "image/jpeg".into()
    } else {
        lower
    }
}

/// The image type a URL's file name says (its path's extension), if it says one.
fn media_type_of_path(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let after_host = path.split_once("://").map_or(path, |(_, rest)| rest);
    let (_, path) = after_host.split_once('/')?;
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    let media_type = match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "heic" => "image/heic",
        "heif" => "image/heif",
        _ => return None,
    };
    Some(media_type.into())
}

/// A text and the part it came from (None for a string content).
pub(super) type Text<'a> = (&'a str, Option<&'a Map<String, Value>>);

/// The texts of `content` for a place that takes text only (`what` says which, for the
/// error), empty texts left out.
pub(super) fn texts<'a>(
    content: Option<&'a Value>,
    index: usize,
    what: &str,
) -> Result<Vec<Text<'a>>, LlmError> {
    let mut out = Vec::new();
    for (n, p) in parts(content, index)?.into_iter().enumerate() {
        match p {
            Part::Text(text, part) => {
                if !text.is_empty() {
                    out.push((text, part));
                }
            }
            Part::Image(_) => return Err(only_text(index, n, what, "image_url")),
            Part::Other(kind, _) => return Err(only_text(index, n, what, kind)),
        }
    }
    Ok(out)
}

fn only_text(index: usize, n: usize, what: &str, kind: &str) -> LlmError {
    LlmError::Request(format!(
        "message {index}, content part {n}: {what} takes text parts only, got a {kind:?} part"
    ))
}

/// `media_type` when it is one of the image types `provider` takes, else the error naming them.
pub(super) fn image_type<'a>(
    media_type: &'a str,
    allowed: &[&str],
    provider: &str,
    index: usize,
) -> Result<&'a str, LlmError> {
    if allowed.contains(&media_type) {
        return Ok(media_type);
    }
    let why = format!(
        "an image of type {media_type:?} (it takes {})",
        allowed.join(", ")
    );
    Err(refused(index, provider, why))
}

/// The error for a part the provider's wire has no place for.
pub(super) fn refused(index: usize, provider: &str, why: String) -> LlmError {
    LlmError::Request(format!("message {index}: {provider} cannot take {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(part: Value) -> Result<String, String> {
        let content = json!([part]);
        let parts = parts(Some(&content), 3).map_err(|e| e.to_string())?;
        Ok(match &parts[0] {
            Part::Text(t, _) => format!("text {t}"),
            Part::Image(Image::Base64 { media_type, data }) => format!("b64 {media_type} {data}"),
            Part::Image(Image::Url { url, media_type }) => format!("url {url} {media_type:?}"),
            Part::Other(kind, _) => format!("other {kind}"),
        })
    }

    #[test]
    fn data_urls_and_http_urls_are_read_with_their_media_type() {
        let img =
            |url: &str| json!({"type": "image_url", "image_url": {"url": url, "detail": "low"}});
        assert_eq!(
            one(img("data:image/PNG;base64,iVBO")).unwrap(),
            "b64 image/png iVBO"
        );
        assert_eq!(
            one(img("data:image/jpg;base64,/9j/")).unwrap(),
            "b64 image/jpeg /9j/"
        );
        assert_eq!(
            one(img("https://x.test/a/cat.JPG?s=1")).unwrap(),
            "url https://x.test/a/cat.JPG?s=1 Some(\"image/jpeg\")"
        );
        assert_eq!(
            one(img("https://x.test/cat")).unwrap(),
            "url https://x.test/cat None"
        );
        assert_eq!(
            one(img("https://x.test")).unwrap(),
            "url https://x.test None"
        );
        let given = json!({"type": "image_url", "image_url": {"url": "https://x.test/f", "mime_type": "image/webp"}});
        assert_eq!(
            one(given).unwrap(),
            "url https://x.test/f Some(\"image/webp\")"
        );
        assert_eq!(
            one(json!({"type": "image_url", "image_url": "http://x.test/a.gif"})).unwrap(),
            "url http://x.test/a.gif Some(\"image/gif\")"
        );
    }

    #[test]
    fn unreadable_parts_are_errors_naming_message_and_part() {
        let img = |url: &str| json!({"type": "image_url", "image_url": {"url": url}});
        let err = one(img("data:image/png,rawbytes")).unwrap_err();
        assert!(
            err.contains("message 3, content part 0") && err.contains("not base64"),
            "{err}"
        );
        let err = one(img("file:///etc/passwd")).unwrap_err();
        assert!(err.contains("data: URL or an http(s) URL"), "{err}");
        assert!(one(img("data:image/png;base64,"))
            .unwrap_err()
            .contains("no data"));
        assert!(one(json!({"type": "image_url"}))
            .unwrap_err()
            .contains("image_url"));
        assert!(one(json!({"type": "text"}))
            .unwrap_err()
            .contains("\"text\" string"));
        assert!(one(json!("loose text"))
            .unwrap_err()
            .contains("part object"));
        assert_eq!(
            one(json!({"type": "input_audio"})).unwrap(),
            "other input_audio"
        );
        let err = parts(Some(&json!(7)), 1).err().unwrap().to_string();
        assert!(err.contains("message 1 has content 7"), "{err}");
    }

    #[test]
    fn texts_keep_each_part_and_refuse_other_parts() {
        let content = json!([{"type": "text", "text": "Rule one."}, {"type": "text", "text": ""},
                             {"type": "text", "text": "Rule two."}]);
        let got: Vec<&str> = texts(Some(&content), 0, "x")
            .unwrap()
            .into_iter()
            .map(|t| t.0)
            .collect();
        assert_eq!(got, vec!["Rule one.", "Rule two."]);
        let with_image =
            json!([{"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}]);
        let err = texts(Some(&with_image), 2, "a system message")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a system message takes text parts only"),
            "{err}"
        );
    }
}
