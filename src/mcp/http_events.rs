//! The server's HTTP event streams, bounded before rmcp reads them (see
//! [`super::http_client`]): an event over the size limit ends its stream (rmcp's limiter is
//! private, so a POST's stream is measured here), each event's message is held to the value
//! budget of [`bounded_message`], an answer rmcp could not read becomes the error answer to
//! the request it names (as over stdio), and on the stream answering one of our requests an
//! error without an id, or the end at an event too large, becomes that request's error answer.

use super::bounded::{bounded_message, error_answer, nests_deeper_than, Envelope};
use super::line_guard::{read_whole, MAX_MESSAGE_DEPTH};
use futures::StreamExt;
use rmcp::model::RequestId;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;

/// The response's event stream, ended with an error at an event of more than `max` bytes
/// (rmcp's limiter is private; [`crate::sse::bounded`]'s error says what its says).
pub(super) fn bounded_sse(response: reqwest::Response, max: usize) -> BoxedSseResponse {
    sse_stream::SseStream::from_bytes_stream(crate::sse::bounded(response.bytes_stream(), max))
        .boxed()
}

/// The server's event stream bounded as the module documentation says; `awaited` is our
/// request it answers ([`error_without_id`], [`too_large_answer`]), if any.
pub(super) fn bounded_events(
    events: BoxedSseResponse,
    awaited: Option<RequestId>,
) -> BoxedSseResponse {
    // As JSON text, as the answers put in the server's place carry it.
    let awaited = awaited.and_then(|id| serde_json::to_string(&id).ok());
    events
        .map(move |event| match (event, awaited.as_deref()) {
            (Ok(mut event), awaited) => {
                if let Some(data) = event.data.take().map(bounded_message) {
                    let data = awaited
                        .and_then(|id| error_without_id(&data, id))
                        .unwrap_or(data);
                    event.data = Some(unreadable_answer(&data).unwrap_or(data));
                }
                Ok(event)
            }
            (Err(e), Some(id)) => too_large_answer(id, &e).ok_or(e),
            (Err(e), None) => Err(e),
        })
        .boxed()
}

/// An error with no id (`"id": null`, or none) on the stream answering our request `id`,
/// given that id: rmcp would drop it, and the call read as if the server had closed the
/// connection.
fn error_without_id(data: &str, id: &str) -> Option<String> {
    memchr::memmem::find(data.as_bytes(), b"\"error\"")?;
    let message = serde_json::from_str::<Envelope<'_>>(data).ok()?;
    let unnamed = message.id.is_none_or(|id| id.get() == "null");
    if !unnamed || message.method.is_some() || message.result.is_some() {
        return None;
    }
    let error = message.error?.get();
    Some(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#))
}

/// An answer rmcp cannot read (truncated, an error of the wrong shape, nesting deeper than
/// serde reads, an id that is its request's number written otherwise), read as over stdio
/// ([`read_whole`]): the error answer to the request it names, or the answer with its id made
/// that number. rmcp skips an event it cannot read, and the call waited for its timeout (for
/// ever with none) while the server held the stream open. Only what [`surely_readable`] cannot
/// vouch for is read again.
fn unreadable_answer(data: &str) -> Option<String> {
    if surely_readable(data) {
        return None;
    }
    serde_json::to_string(&read_whole(data.as_bytes())?).ok()
}

/// Whether rmcp reads `data` as what it is, as far as a look that builds nothing tells: a
/// request or notification, or a message naming no request, is rmcp's to judge; an answer
/// needs version 2.0, an id that is a string other than digits or an integer, a result (rmcp
/// types any) or an error of the right shape, and nesting within [`MAX_MESSAGE_DEPTH`].
fn surely_readable(data: &str) -> bool {
    let Ok(env) = serde_json::from_str::<Envelope<'_>>(data) else {
        return !data.trim_start().starts_with('{');
    };
    let Some(id) = env.id.map(|id| id.get()).filter(|_| env.method.is_none()) else {
        return true;
    };
    let id_as_is = match id.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(text) => !text.bytes().all(|b| b.is_ascii_digit()),
        None => id == "null" || id.bytes().all(|b| b.is_ascii_digit() || b == b'-'),
    };
    let error_ok = env
        .error
        .is_none_or(|e| serde_json::from_str::<rmcp::model::ErrorData>(e.get()).is_ok());
    id_as_is
        && env.jsonrpc.is_some_and(|v| v.get() == r#""2.0""#)
        && (env.result.is_some() || env.error.is_some())
        && error_ok
        && !nests_deeper_than(data.as_bytes(), MAX_MESSAGE_DEPTH)
}

/// For a stream ended at an event too large (by [`bounded_sse`] or rmcp's limiter, whose error
/// text is the same, rmcp being pinned exactly), an event carrying the error answer to request
/// `id` saying so: rmcp read it as "the server closed the connection".
fn too_large_answer(id: &str, error: &sse_stream::Error) -> Option<sse_stream::Sse> {
    let why = error.to_string();
    let why = why.rsplit(": ").next()?;
    if !matches!(error, sse_stream::Error::Body(_)) || !why.contains("exceeded the maximum size") {
        return None;
    }
    let message = format!("{why}; the answer was not read");
    Some(sse_stream::Sse::default().data(error_answer(id, -32603, &message)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::bounded::UNREAD_KEY;

    /// An event over rmcp's size limit fails the request its stream answers, saying so; on a
    /// stream answering nothing (the GET stream) and for other errors, the error stays.
    #[test]
    fn an_event_too_large_to_read_answers_the_request_with_the_reason() {
        use futures::StreamExt;
        let too_large = || {
            sse_stream::Error::Body(Box::new(std::io::Error::other(
                "SSE event exceeded the maximum size of 16777216 bytes",
            )))
        };
        let events = |errors: Vec<sse_stream::Error>| -> BoxedSseResponse {
            futures::stream::iter(errors.into_iter().map(Err)).boxed()
        };
        let run = |stream: BoxedSseResponse| {
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(stream.collect::<Vec<_>>())
        };
        let got = run(bounded_events(
            events(vec![too_large()]),
            Some(RequestId::Number(7)),
        ));
        let answer: serde_json::Value =
            serde_json::from_str(got[0].as_ref().unwrap().data.as_deref().unwrap()).unwrap();
        assert_eq!(
            answer,
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603,
                "message": "SSE event exceeded the maximum size of 16777216 bytes; the answer was not read"}})
        );
        assert!(run(bounded_events(events(vec![too_large()]), None))[0].is_err());
        let other = sse_stream::Error::Body(Box::new(std::io::Error::other("connection reset")));
        assert!(run(bounded_events(
            events(vec![other]),
            Some(RequestId::Number(7))
        ))[0]
            .is_err());
        assert!(run(bounded_events(
            events(vec![sse_stream::Error::InvalidLine]),
            Some(RequestId::Number(7))
        ))[0]
            .is_err());
    }

    /// An id-less error on the stream answering request 7 is request 7's; anything else on it
    /// is left as it is.
    #[test]
    fn an_error_without_an_id_answers_the_request_its_stream_answers() {
        use futures::StreamExt;
        let event = |data: &str| -> Result<sse_stream::Sse, sse_stream::Error> {
            Ok(sse_stream::Sse::default().data(data))
        };
        let sent = [
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"down"}}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"down"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"down"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"error":1}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
        ];
        let run = |awaited: Option<RequestId>| {
            let events = futures::stream::iter(sent.map(event)).boxed();
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(bounded_events(events, awaited).collect::<Vec<_>>())
                .into_iter()
                .map(|e| e.unwrap().data.unwrap())
                .collect::<Vec<_>>()
        };
        let answered = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"down"}}"#;
        let got = run(Some(RequestId::Number(7)));
        assert_eq!(got[..2], [answered, answered]);
        assert_eq!(got[2..], sent[2..]);
        assert_eq!(run(None), sent);
    }

    /// An answer rmcp would skip is read as over stdio; what it reads, or what names no
    /// request, is left as it is.
    #[test]
    fn an_answer_rmcp_cannot_read_is_read_as_over_stdio() {
        let error = |data: &str| -> (serde_json::Value, String) {
            let v: serde_json::Value =
                serde_json::from_str(&unreadable_answer(data).unwrap()).unwrap();
            (
                v["id"].clone(),
                v["error"]["message"].as_str().unwrap_or("").to_owned(),
            )
        };
        let (id, why) = error(r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type""#);
        assert!(
            id == 3 && why.starts_with("the server's answer is not valid JSON"),
            "{why}"
        );
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":4,"result":{}{}}}"#,
            "[".repeat(150),
            "]".repeat(150)
        );
        let (id, why) = error(&deep);
        assert!(id == 4 && why.contains("deeper than 100"), "{why}");
        let (id, why) = error(r#"{"jsonrpc":"2.0","id":5,"error":"boom"}"#);
        assert_eq!(
            (id, why.as_str()),
            (5.into(), r#"malformed error answer: "boom""#)
        );
        let (id, why) = error(r#"{"jsonrpc":"1.0","id":6,"result":{}}"#);
        assert!(
            id == 6 && why.contains("not a valid JSON-RPC response"),
            "{why}"
        );
        // The request's number written as a string or with a fraction is that number.
        for lenient in [
            r#"{"jsonrpc":"2.0","id":"7","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7.0,"result":{}}"#,
        ] {
            let v: serde_json::Value =
                serde_json::from_str(&unreadable_answer(lenient).unwrap()).unwrap();
            assert_eq!(
                v,
                serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": {}})
            );
        }
        let deep_strings = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"t":"{}"}}}}"#,
            "[".repeat(300)
        );
        for fine in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":"am-1","error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
            "hello",
            r#"{"jsonrpc":"2.0","result":{"#,
            &deep_strings,
        ] {
            assert_eq!(unreadable_answer(fine), None, "{fine}");
        }
    }

    #[test]
    fn events_of_too_many_values_are_cut_before_rmcp_parses_them() {
        let zeros = vec!["0"; 300_000].join(",");
        let event = |data: String| sse_stream::Sse {
            data: Some(data),
            ..Default::default()
        };
        let bounded_event = |e: sse_stream::Sse| -> sse_stream::Sse {
            use futures::FutureExt;
            let events = futures::stream::iter([Ok(e)]).boxed();
            let first = bounded_events(events, None).next().now_or_never();
            first.flatten().unwrap().unwrap()
        };
        let parsed = |e: sse_stream::Sse| -> serde_json::Value {
            serde_json::from_str(&bounded_event(e).data.unwrap()).unwrap()
        };
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"kept"}}],"structuredContent":[{zeros}]}}}}"#
        );
        assert_eq!(
            parsed(event(answer)),
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": {
                "content": [{"type": "text", "text": "kept"}], "structuredContent": {UNREAD_KEY: true}}})
        );
        let blocks = vec![r#"{"type":"text","text":""}"#; 100_000].join(",");
        let v = parsed(event(format!(
            r#"{{"jsonrpc":"2.0","id":"x","result":{{"content":[{blocks}]}}}}"#
        )));
        assert_eq!(v["id"], "x");
        assert_eq!(
            v["error"]["message"],
            super::super::bounded::too_many_values()
        );
        let v = parsed(event(format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":[{zeros}]}}}}"#
        )));
        assert_eq!(v["method"], "notifications/agentmaker/dropped");
        // The budget cannot be dodged by putting the values in the id.
        let v = parsed(event(format!(
            r#"{{"jsonrpc":"2.0","id":[{zeros}],"result":{{}}}}"#
        )));
        assert_eq!(v["method"], "notifications/agentmaker/dropped");
        // Small events pass as they are.
        let small = r#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":[0,0]}}"#;
        assert_eq!(bounded_event(event(small.into())).data.unwrap(), small);
    }
}
