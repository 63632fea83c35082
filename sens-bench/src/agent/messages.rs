//! The one Anthropic Messages API client of the harness: one blocking,
//! non-streaming request in, the answer's text and its usage out.
//!
//! The base URL is `ANTHROPIC_BASE_URL` (the scripted model server in tests;
//! [`DEFAULT_BASE_URL`] otherwise) and the key `ANTHROPIC_API_KEY`, the variables
//! Claude Code itself reads, so one environment points both at the same server.
//! The client is `ureq` 3: blocking fits the callers (a command, a hook handler
//! on its own thread), and it needs no async runtime of its own.

use std::time::Duration;

use serde_json::{Value, json};

use super::Usage;

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";
/// Error bodies are cut to this many bytes in messages (they can be whole pages).
const ERROR_BODY_LIMIT: usize = 500;

/// Why a call gave no answer. Every failure is one of these; none is a guess.
#[derive(Debug, thiserror::Error)]
pub enum MessagesError {
    #[error("ANTHROPIC_API_KEY is not set: the Messages API needs a key")]
    MissingKey,
    #[error("the Messages API at {url} did not answer within {}s", timeout.as_secs_f64())]
    Timeout { url: String, timeout: Duration },
    #[error("the Messages API at {url} answered HTTP {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error("cannot reach the Messages API at {url}: {reason}")]
    Transport { url: String, reason: String },
    #[error("the Messages API at {url} sent a malformed answer: {reason}")]
    Malformed { url: String, reason: String },
}

/// The text of an answer (its text blocks joined) and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub usage: Usage,
}

/// A client for one model with one timeout per call.
#[derive(Debug, Clone)]
pub struct MessagesClient {
    url: String,
    api_key: String,
    model: String,
    timeout: Duration,
    agent: ureq::Agent,
}

impl MessagesClient {
    /// `base_url` without the `/v1/messages` path.
    pub fn new(base_url: &str, api_key: &str, model: &str, timeout: Duration) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build()
            .into();
        MessagesClient {
            url: format!("{}/v1/messages", base_url.trim_end_matches('/')),
            api_key: api_key.to_string(),
            model: model.to_string(),
            timeout,
            agent,
        }
    }

    /// The client `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY` describe.
    pub fn from_env(model: &str, timeout: Duration) -> Result<Self, MessagesError> {
        let key = std::env::var("ANTHROPIC_API_KEY")
            .ok()
            .filter(|key| !key.is_empty())
            .ok_or(MessagesError::MissingKey)?;
        let base = std::env::var("ANTHROPIC_BASE_URL")
            .ok()
            .filter(|url| !url.is_empty())
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        Ok(MessagesClient::new(&base, &key, model, timeout))
    }

    /// Asks one question: `system` and one user message, at most `max_tokens` back.
    pub fn ask(&self, system: &str, user: &str, max_tokens: u32) -> Result<Answer, MessagesError> {
        let body = json!({
            "model": self.model,
            "max_tokens": max_tokens,
            "system": system,
            "messages": [{"role": "user", "content": user}],
        });
        let response = self
            .agent
            .post(&self.url)
            .header("x-api-key", &self.api_key)
            .header("anthropic-version", API_VERSION)
            .header("content-type", "application/json")
            .send(body.to_string());
        let mut response = response.map_err(|err| self.transport_error(err))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|err| self.transport_error(err))?;
        if status != 200 {
            return Err(MessagesError::Status {
                url: self.url.clone(),
                status,
                body: text[..text.floor_char_boundary(ERROR_BODY_LIMIT)].to_string(),
            });
        }
        parse_answer(&text).map_err(|reason| MessagesError::Malformed {
            url: self.url.clone(),
            reason,
        })
    }

    fn transport_error(&self, err: ureq::Error) -> MessagesError {
        match err {
            ureq::Error::Timeout(_) => MessagesError::Timeout {
                url: self.url.clone(),
                timeout: self.timeout,
            },
            other => MessagesError::Transport {
                url: self.url.clone(),
                reason: other.to_string(),
            },
        }
    }
}

/// Reads a non-streaming message: its text blocks in order and its usage; a body
/// that is not such a message says what is missing.
fn parse_answer(body: &str) -> Result<Answer, String> {
    let message: Value =
        serde_json::from_str(body).map_err(|err| format!("the body is not JSON: {err}"))?;
    let content = message["content"].as_array().ok_or("no `content` array")?;
    let text: Vec<&str> = content
        .iter()
        .filter(|block| block["type"] == "text")
        .map(|block| block["text"].as_str().ok_or("a text block without `text`"))
        .collect::<Result<_, _>>()?;
    let usage = &message["usage"];
    let count = |field: &str, required: bool| match usage[field].as_u64() {
        Some(n) => Ok(n),
        None if !required && usage[field].is_null() => Ok(0),
        None => Err(format!("no whole number `usage.{field}`")),
    };
    Ok(Answer {
        text: text.concat(),
        usage: Usage {
            input: count("input_tokens", true)?,
            output: count("output_tokens", true)?,
            cache_read: count("cache_read_input_tokens", false)?,
            cache_creation: count("cache_creation_input_tokens", false)?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_joins_its_text_blocks_and_reads_its_usage() {
        let body = r#"{"content": [{"type": "text", "text": "a"}, {"type": "tool_use"}, {"type": "text", "text": "b"}],
                       "usage": {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": null}}"#;
        assert_eq!(
            parse_answer(body),
            Ok(Answer {
                text: "ab".into(),
                usage: Usage {
                    input: 3,
                    output: 4,
                    cache_read: 0,
                    cache_creation: 0
                },
            })
        );
    }

    #[test]
    fn a_body_that_is_no_message_is_malformed() {
        assert!(parse_answer("{").unwrap_err().contains("not JSON"));
        assert!(parse_answer("{}").unwrap_err().contains("`content`"));
        let no_usage = r#"{"content": [{"type": "text", "text": "a"}]}"#;
        assert!(
            parse_answer(no_usage)
                .unwrap_err()
                .contains("usage.input_tokens")
        );
        let bad_text = r#"{"content": [{"type": "text", "text": 1}], "usage": {}}"#;
        assert!(
            parse_answer(bad_text)
                .unwrap_err()
                .contains("without `text`")
        );
    }

    /// The client against the scripted model server: the answer and its usage,
    /// then each typed failure.
    #[tokio::test(flavor = "multi_thread")]
    async fn asks_the_scripted_server_and_types_its_failures() {
        use crate::agent::model_server::{ModelServer, Route};
        use crate::agent::script::{Decision, Script};
        let script = Script {
            decisions: vec![
                Decision {
                    when: "rule a".into(),
                    reply: json!({"a": 0.25}),
                    delay_ms: 0,
                },
                Decision {
                    when: "slow".into(),
                    reply: json!({}),
                    delay_ms: 3_000,
                },
            ],
            ..Script::default()
        };
        let server = ModelServer::start(script, std::path::Path::new("/ws"))
            .await
            .unwrap();
        let client = MessagesClient::new(&server.base_url(), "k", "m", Duration::from_millis(500));
        let ask = |user: &'static str| {
            let client = client.clone();
            tokio::task::spawn_blocking(move || client.ask("be strict", user, 100))
        };

        let answer = ask("is rule a followed?").await.unwrap().unwrap();
        assert_eq!(answer.text, r#"{"a":0.25}"#);
        let recorded = server.requests();
        assert_eq!(recorded[0].route, Route::Decision);
        assert_eq!(Some(answer.usage), recorded[0].usage);
        assert_eq!(recorded[0].headers["x-api-key"], "k");
        assert_eq!(recorded[0].body.as_ref().unwrap()["system"], "be strict");

        let err = ask("slow one").await.unwrap().unwrap_err();
        assert!(matches!(err, MessagesError::Timeout { .. }), "{err}");

        server.fail_with(Some(529)).unwrap();
        let err = ask("is rule a followed?").await.unwrap().unwrap_err();
        assert!(
            matches!(err, MessagesError::Status { status: 529, ref body, .. } if body.contains("scripted failure")),
            "{err}"
        );

        let closed = MessagesClient::new("http://127.0.0.1:1", "k", "m", Duration::from_secs(5));
        let err = closed.ask("s", "u", 1).unwrap_err();
        assert!(matches!(err, MessagesError::Transport { .. }), "{err}");
    }
}
