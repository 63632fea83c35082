//! The `acceptance` guard's point extractor: the user's words to points by one
//! Messages API call (the run's model; the scripted model server in tests),
//! through the one client, [`super::messages`]. An answer that is not the
//! asked-for JSON is a failed extraction, never "no points".

use sens_engine::session::guards::acceptance::{Point, PointExtractor};
use serde::Deserialize;

use super::messages::MessagesClient;

const SYSTEM: &str = "You turn a user's request to a coding agent into acceptance points. \
Answer with JSON only: {\"points\": [{\"text\": the requirement in the user's words, \
\"acceptance\": how to tell it is met, \"command\": a shell command whose passing run proves it \
or null, \"inferred\": true when the user did not say it in so many words}]}. \
List each requirement once; list none that the words do not support.";

/// The answer's shape.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Points {
    points: Vec<Point>,
}

pub struct MessagesExtractor {
    client: MessagesClient,
}

impl MessagesExtractor {
    pub fn new(client: MessagesClient) -> Self {
        Self { client }
    }
}

impl PointExtractor for MessagesExtractor {
    fn extract(&self, words: &str) -> anyhow::Result<Vec<Point>> {
        let user = format!("The user's words:\n<words>\n{words}\n</words>");
        let answer = self.client.ask(SYSTEM, &user, 2000)?;
        let text = answer.text.trim();
        // Models often fence JSON; the fence is not part of the answer.
        let json = text
            .strip_prefix("```json")
            .or_else(|| text.strip_prefix("```"))
            .and_then(|t| t.strip_suffix("```"))
            .unwrap_or(text);
        let points: Points = serde_json::from_str(json.trim()).map_err(|e| {
            anyhow::anyhow!("the extractor's answer is not the points JSON ({e}): {text:.200}")
        })?;
        Ok(points.points)
    }
}
