//! How a turn's [`Reply`](crate::transcript::Reply) is written in a report: every field present (`null` when absent)
//! and the text of all messages joined, for readers that want one string. The agent's own
//! echo id is not kept; its tokens and their cost are (the case sums them too).

use serde::{Deserialize, Serialize};

use crate::transcript::{Handoff, Message, ReplyError, ToolCall, Transfer, Usage};

/// The agent's reply as a report writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub(super) struct ReplyRecord {
    /// All agent text, messages joined by a newline.
    pub text: String,
    pub messages: Vec<Message>,
    pub tool_calls: Vec<ToolCall>,
    pub transfer: Option<Transfer>,
    pub handoff: Option<Handoff>,
    pub error: Option<ReplyError>,
    /// The session variables after the turn, where the agent reported them. Absent from
    /// older reports.
    #[serde(default)]
    pub variables: Option<serde_json::Map<String, serde_json::Value>>,
    /// The turn's tokens and cost, where the agent reported tokens. Absent from older
    /// reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// `#[serde(with)]` for `Option<Reply>` fields.
pub(super) mod report {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::ReplyRecord;
    use crate::transcript::Reply;

    pub(crate) fn serialize<S: Serializer>(reply: &Option<Reply>, s: S) -> Result<S::Ok, S::Error> {
        reply
            .as_ref()
            .map(|reply| ReplyRecord {
                text: reply.text(),
                messages: reply.messages.clone(),
                tool_calls: reply.tool_calls.clone(),
                transfer: reply.transfer.clone(),
                handoff: reply.handoff.clone(),
                error: reply.error.clone(),
                variables: reply.variables.clone(),
                usage: reply.usage,
            })
            .serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Reply>, D::Error> {
        Ok(Option::<ReplyRecord>::deserialize(d)?.map(|record| Reply {
            messages: record.messages,
            tool_calls: record.tool_calls,
            transfer: record.transfer,
            handoff: record.handoff,
            error: record.error,
            variables: record.variables,
            usage: record.usage,
            ..Reply::default()
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::transcript::{Message, Reply};

    #[test]
    fn a_reply_reads_back_as_written() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Holder {
            #[serde(with = "super::report")]
            reply: Option<Reply>,
        }
        let reply = Reply {
            messages: vec![Message {
                text: "hi".into(),
                agent: None,
            }],
            ..Reply::default()
        };
        let json = serde_json::to_string(&Holder {
            reply: Some(reply.clone()),
        })
        .unwrap();
        assert!(json.contains(r#""text":"hi""#), "{json}");
        assert!(json.contains(r#""transfer":null"#), "{json}");
        let back: Holder = serde_json::from_str(&json).unwrap();
        assert_eq!(back.reply, Some(reply));
    }
}
