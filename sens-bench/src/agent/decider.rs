//! The decision model: a state (the change and what it needs) and named yes/no
//! questions in, one probability per question out.
//!
//! Two backends, chosen from the environment ([`from_env`]):
//! - the decisions endpoint, when `SENS_DECISIONS_URL` is set: `POST` of
//!   `{"state", "questions": {name: text}}` with `SENS_DECISIONS_KEY` as a bearer
//!   token, answered by `{"probabilities": {name: p}}`;
//! - otherwise the Messages API ([`MessagesClient`]), asked for one JSON object
//!   of probabilities and nothing else.
//!
//! Either answer is parsed strictly: exactly the questions asked, each a number in
//! [0, 1]. Anything else is a failure, never a guess.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::Usage;
use super::messages::{MessagesClient, MessagesError};

/// The Messages API model a review asks unless told otherwise.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Enough for a JSON object of probabilities for the 15 rules a file may have.
const MAX_ANSWER_TOKENS: u32 = 1024;

const SYSTEM: &str = "You judge a code change. For each question, estimate the probability \
that the answer is yes. Answer with exactly one JSON object and nothing else: each key a \
question name as given, each value a number from 0 to 1.";

#[derive(Debug, Clone, PartialEq)]
pub struct DecisionRequest {
    pub state: String,
    /// Question name -> question.
    pub questions: BTreeMap<String, String>,
}

impl DecisionRequest {
    /// What the Messages API backend sends as the user message.
    fn prompt(&self) -> String {
        let questions: String = self
            .questions
            .iter()
            .map(|(name, question)| format!("- {name}: {question}\n"))
            .collect();
        format!("{}\n\nQuestions:\n{questions}", self.state)
    }

    /// A rough size in tokens (4 bytes each), for the budget.
    pub fn estimated_tokens(&self) -> u64 {
        (self.prompt().len() as u64 + SYSTEM.len() as u64).div_ceil(4)
    }
}

/// One probability per question, and what the call cost (zero when the backend
/// does not say).
#[derive(Debug, Clone, PartialEq)]
pub struct Decisions {
    pub probabilities: BTreeMap<String, f64>,
    pub usage: Usage,
}

#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    #[error(transparent)]
    Messages(#[from] MessagesError),
    #[error("the decisions endpoint {url} failed: {reason}")]
    Endpoint { url: String, reason: String },
    #[error("the decision model's answer is malformed: {reason}")]
    Malformed { reason: String },
}

pub trait Decider: Send + Sync {
    fn decide(&self, request: &DecisionRequest) -> Result<Decisions, DecideError>;
}

/// The backend the environment names.
pub fn from_env(model: &str, timeout: Duration) -> Result<Box<dyn Decider>, DecideError> {
    match std::env::var("SENS_DECISIONS_URL") {
        Ok(url) if !url.is_empty() => Ok(Box::new(Endpoint::new(
            &url,
            std::env::var("SENS_DECISIONS_KEY").ok(),
            timeout,
        ))),
        _ => Ok(Box::new(Messages(MessagesClient::from_env(
            model, timeout,
        )?))),
    }
}

pub struct Messages(pub MessagesClient);

impl Decider for Messages {
    fn decide(&self, request: &DecisionRequest) -> Result<Decisions, DecideError> {
        let answer = self.0.ask(SYSTEM, &request.prompt(), MAX_ANSWER_TOKENS)?;
        let value: Value =
            serde_json::from_str(answer.text.trim()).map_err(|err| DecideError::Malformed {
                reason: format!("not one JSON object ({err}): {:?}", answer.text),
            })?;
        Ok(Decisions {
            probabilities: probabilities(&value, request)?,
            usage: answer.usage,
        })
    }
}

pub struct Endpoint {
    url: String,
    key: Option<String>,
    agent: ureq::Agent,
}

impl Endpoint {
    pub fn new(url: &str, key: Option<String>, timeout: Duration) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .build()
            .into();
        Endpoint {
            url: url.to_string(),
            key,
            agent,
        }
    }

    fn failure(&self, reason: impl ToString) -> DecideError {
        DecideError::Endpoint {
            url: self.url.clone(),
            reason: reason.to_string(),
        }
    }
}

impl Decider for Endpoint {
    fn decide(&self, request: &DecisionRequest) -> Result<Decisions, DecideError> {
        let body = json!({"state": request.state, "questions": request.questions});
        let mut call = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json");
        if let Some(key) = &self.key {
            call = call.header("authorization", &format!("Bearer {key}"));
        }
        let mut response = call
            .send(body.to_string())
            .map_err(|err| self.failure(err))?;
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|err| self.failure(err))?;
        let value: Value = serde_json::from_str(&text).map_err(|err| DecideError::Malformed {
            reason: format!("the endpoint's body is not JSON ({err})"),
        })?;
        Ok(Decisions {
            probabilities: probabilities(&value["probabilities"], request)?,
            usage: Usage::default(),
        })
    }
}

/// Exactly the questions asked, each a probability.
fn probabilities(
    value: &Value,
    request: &DecisionRequest,
) -> Result<BTreeMap<String, f64>, DecideError> {
    let malformed = |reason: String| DecideError::Malformed { reason };
    let object = value
        .as_object()
        .ok_or_else(|| malformed(format!("expected a JSON object, got {value}")))?;
    if let Some(extra) = object.keys().find(|k| !request.questions.contains_key(*k)) {
        return Err(malformed(format!("`{extra}` is no question asked")));
    }
    request
        .questions
        .keys()
        .map(|name| {
            let p = object
                .get(name)
                .ok_or_else(|| malformed(format!("no answer to `{name}`")))?
                .as_f64()
                .filter(|p| (0.0..=1.0).contains(p))
                .ok_or_else(|| malformed(format!("`{name}` is not a number from 0 to 1")))?;
            Ok((name.clone(), p))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> DecisionRequest {
        DecisionRequest {
            state: "diff".into(),
            questions: [
                ("a".to_string(), "qa".to_string()),
                ("b".into(), "qb".into()),
            ]
            .into_iter()
            .collect(),
        }
    }

    #[test]
    fn answers_are_exactly_the_questions_each_a_probability() {
        let got = probabilities(&json!({"a": 0.25, "b": 1}), &request()).unwrap();
        assert_eq!(
            got,
            [("a".to_string(), 0.25), ("b".into(), 1.0)]
                .into_iter()
                .collect()
        );
        for bad in [
            json!({"a": 0.2}),
            json!({"a": 0.2, "b": 0.3, "c": 0.1}),
            json!({"a": 1.5, "b": 0.1}),
            json!({"a": "0.5", "b": 0.1}),
            json!([0.1, 0.2]),
        ] {
            let err = probabilities(&bad, &request()).unwrap_err();
            assert!(matches!(err, DecideError::Malformed { .. }), "{bad}: {err}");
        }
    }

    #[test]
    fn the_prompt_names_each_question() {
        let prompt = request().prompt();
        assert!(
            prompt.starts_with("diff\n\nQuestions:\n- a: qa\n- b: qb\n"),
            "{prompt}"
        );
    }
}
