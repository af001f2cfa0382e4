//! Which request a resumed HTTP event stream answers.
//!
//! When the event stream answering a POST breaks off before the answer, rmcp opens it again
//! with a `GET` carrying the id of the last event it saw (`Last-Event-ID`). That `GET` does
//! not say which request the stream answers, so an event too large to read on it could only
//! end the stream, and the call read "the MCP server closed the connection". The ids of the
//! events seen on the stream of each of our requests are kept here (the latest
//! [`MAX_EVENT_IDS`]), so the resumed stream is known to answer that request, and an event too
//! large on it fails that request saying so, as on the stream of the POST itself.

use futures::StreamExt;
use rmcp::model::RequestId;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Event ids remembered; the oldest is forgotten beyond this.
pub const MAX_EVENT_IDS: usize = 1024;

/// Longest event id remembered. An id is bounded only by the event's size (16 MiB), and 1,024
/// of them would hold gigabytes; a stream resumed after a longer one is not known to answer
/// any request (an event too large on it ends it as "closed").
pub const MAX_EVENT_ID_BYTES: usize = 256;

/// The event ids seen, each with the request whose stream carried it, the latest last.
#[derive(Default)]
pub struct ResumedStreams {
    seen: Mutex<VecDeque<(String, RequestId)>>,
}

impl ResumedStreams {
    /// `events`, each event id seen on it noted as one of the stream answering `request`, so
    /// that a stream resuming it with `GET` answers that request too.
    pub fn noting(
        self: &Arc<Self>,
        events: BoxedSseResponse,
        request: Option<RequestId>,
    ) -> BoxedSseResponse {
        let Some(request) = request else {
            return events;
        };
        let streams = self.clone();
        events
            .inspect(move |event| {
                if let Some(id) = event.as_ref().ok().and_then(|e| e.id.as_deref()) {
                    streams.note(id, &request);
                }
            })
            .boxed()
    }

    fn note(&self, event_id: &str, request: &RequestId) {
        if event_id.len() > MAX_EVENT_ID_BYTES {
            return;
        }
        let Ok(mut seen) = self.seen.lock() else {
            return;
        };
        if seen.len() >= MAX_EVENT_IDS {
            seen.pop_front();
        }
        seen.push_back((event_id.to_owned(), request.clone()));
    }

    /// The request whose stream carried the event `last_event_id`, if it is remembered.
    pub fn request_of(&self, last_event_id: Option<&str>) -> Option<RequestId> {
        let id = last_event_id?;
        let seen = self.seen.lock().ok()?;
        let (_, request) = seen.iter().rev().find(|(event, _)| event == id)?;
        Some(request.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_events_of_a_requests_stream_name_that_request_within_a_bound() {
        let streams = Arc::new(ResumedStreams::default());
        let event = |id: &str| Ok(sse_stream::Sse::default().id(id).data("{}"));
        let events = futures::stream::iter(vec![
            event("e1"),
            Ok(sse_stream::Sse::default().data("no id")),
            event("e2"),
        ])
        .boxed();
        let passed = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(
                streams
                    .noting(events, Some(RequestId::Number(7)))
                    .collect::<Vec<_>>(),
            );
        assert_eq!(passed.len(), 3, "every event passes on unchanged");
        assert_eq!(streams.request_of(Some("e2")), Some(RequestId::Number(7)));
        assert_eq!(streams.request_of(Some("e1")), Some(RequestId::Number(7)));
        assert_eq!(streams.request_of(Some("other")), None);
        assert_eq!(streams.request_of(None), None);
        for n in 0..MAX_EVENT_IDS {
            streams.note(&format!("x{n}"), &RequestId::Number(8));
        }
        assert_eq!(
            streams.request_of(Some("e1")),
            None,
            "the oldest is forgotten"
        );
        assert_eq!(streams.request_of(Some("x0")), Some(RequestId::Number(8)));
        // An id longer than an id needs be is not kept.
        let long = "i".repeat(MAX_EVENT_ID_BYTES + 1);
        streams.note(&long, &RequestId::Number(9));
        assert_eq!(streams.request_of(Some(&long)), None);
        assert_eq!(streams.request_of(Some("x0")), Some(RequestId::Number(8)));
    }
}
