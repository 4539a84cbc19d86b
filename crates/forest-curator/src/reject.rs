//! Why a model reply was rejected in the validate-and-retry loop (§4.3),
//! as a value: the loop compares two rejections to stop early, and turns
//! one into the retry instruction's text.

use forest_model::scent::SummaryError;

/// One rejected reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// The reply was empty.
    EmptyReply,
    /// No summary field in the reply.
    NoSummary,
    /// The summary breaks the scent contract (length, anti-pattern).
    Contract(SummaryError),
    /// Numbers, dates, versions or names that the source does not contain.
    Ungrounded(Vec<String>),
    /// A phrase said twice.
    Repeated(String),
}

impl Rejection {
    /// The text fed back to the model (and kept in `last_reject`).
    pub(crate) fn message(&self) -> String {
        match self {
            Rejection::EmptyReply => "the model returned an empty message".to_string(),
            Rejection::NoSummary => "no summary found in the JSON reply".to_string(),
            Rejection::Contract(e) => e.message(),
            Rejection::Ungrounded(missing) => format!(
                "not in the content: {}; use only names, numbers and dates the content contains",
                missing.join(", ")
            ),
            Rejection::Repeated(phrase) => format!("it repeats \"{phrase}\"; say each thing once"),
        }
    }

    /// Whether a retry after `self` is worth a call, given the rejection of
    /// the attempt before (`previous`). A model that answers a rejection
    /// with the same fault did not take the feedback in; its third reply
    /// repeats it too. Measured with the test setup's model on 30 real
    /// documents (bench/curator-live.sh, session 17): of 43 loops rejected
    /// twice, one passed on the third call, and 42 of the 43 second
    /// rejections repeated the first. An over-long reply is the exception:
    /// its estimate changes with every reply and the loop ends in a repair.
    pub(crate) fn worth_retry_after(&self, previous: Option<&Rejection>) -> bool {
        previous != Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_fault_stops_the_loop_a_new_one_does_not() {
        let first = Rejection::Repeated("debian".into());
        assert!(first.worth_retry_after(None));
        assert!(!first.worth_retry_after(Some(&Rejection::Repeated("debian".into()))));
        assert!(first.worth_retry_after(Some(&Rejection::Repeated("bash".into()))));
        let ungrounded = Rejection::Ungrounded(vec!["3D".into()]);
        assert!(!ungrounded.worth_retry_after(Some(&Rejection::Ungrounded(vec!["3D".into()]))));
        assert!(ungrounded.worth_retry_after(Some(&first)));
        // Over-long replies shrink (or not) with every answer: compared by
        // estimate, so a shorter one still earns its retry.
        let long = Rejection::Contract(SummaryError::TooLong(80));
        assert!(long.worth_retry_after(Some(&Rejection::Contract(SummaryError::TooLong(95)))));
    }

    #[test]
    fn messages_are_the_dialects() {
        assert_eq!(Rejection::EmptyReply.message(), "the model returned an empty message");
        assert_eq!(Rejection::NoSummary.message(), "no summary found in the JSON reply");
        assert_eq!(
            Rejection::Ungrounded(vec!["1999".into(), "Acme".into()]).message(),
            "not in the content: 1999, Acme; use only names, numbers and dates the content contains"
        );
        assert!(Rejection::Contract(SummaryError::TooLong(70)).message().contains("exceeds 60 tokens"));
    }
}
