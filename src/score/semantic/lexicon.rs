//! The word lists behind the local similarity in [`super::semantic`]: small on purpose, so
//! that a reader can see every word that changes a verdict. Entries are written as people
//! write them; `semantic` stems them the same way it stems the texts it compares.

use std::collections::HashMap;
use std::sync::LazyLock;

/// Words that carry no content: articles, pronouns, auxiliaries, prepositions, and the
/// fragments left by splitting contractions (`what's` -> `what`, `s`).
pub const STOPWORDS: &[&str] = &[
    "a", "about", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "being", "both", "but", "by", "can", "could", "d", "did", "do", "does", "each", "for", "from",
    "get", "go", "going", "got", "had", "has", "have", "he", "her", "here", "him", "his", "how",
    "i", "if", "in", "into", "is", "it", "its", "just", "let", "like", "ll", "m", "may", "me",
    "might", "mine", "more", "most", "must", "my", "now", "of", "on", "only", "or", "other", "our",
    "ours", "out", "per", "re", "s", "same", "shall", "she", "should", "so", "some", "still",
    "such", "t", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "to", "too", "up", "us", "ve", "very", "via", "was", "we", "were", "what", "when",
    "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "would", "yet",
    "you", "your", "yours", "able", "within",
];

/// Courtesy words: they change the tone, never the facts, so paraphrases add and drop them
/// freely.
pub const FILLER: &[&str] = &[
    "hi",
    "hello",
    "hey",
    "welcome",
    "thanks",
    "thank",
    "please",
    "sure",
    "certainly",
    "absolutely",
    "definitely",
    "happy",
    "glad",
    "great",
    "good",
    "news",
    "sorry",
    "apologize",
    "apologies",
    "unfortunately",
    "okay",
    "ok",
    "right",
    "perfect",
    "wonderful",
    "excellent",
    "awesome",
    "afraid",
    "indeed",
    "well",
    "again",
];

/// Word sequences rewritten before comparing: idioms whose negation word negates nothing, and
/// wordings of the same bound. Matched on whole words, after contractions are expanded.
pub const PHRASES: &[(&str, &str)] = &[
    ("do not hesitate", ""),
    ("no problem", ""),
    ("not a problem", ""),
    ("no worries", ""),
    ("of course", ""),
    ("not only", ""),
    ("no later than", "by"),
    ("not later than", "by"),
    ("anything else", ""),
    ("look up", "check"),
];

/// Words that make a statement negative. `n't` and `cannot` are expanded to `not` first.
pub const NEGATIONS: &[&str] = &[
    "not", "no", "never", "none", "nothing", "nobody", "nor", "neither", "nowhere", "unable",
];

/// Paraphrase groups: each word on the left counts as the one on the right.
pub const SYNONYMS: &[(&str, &str)] = &[
    ("number", "id"),
    ("identifier", "id"),
    ("provide", "share"),
    ("give", "share"),
    ("send", "share"),
    ("tell", "share"),
    ("enter", "share"),
    ("assist", "help"),
    ("assistance", "help"),
    ("support", "help"),
    ("track", "check"),
    ("lookup", "check"),
    ("verify", "check"),
    ("locate", "find"),
    ("found", "find"),
    ("arrival", "arrive"),
    ("reach", "arrive"),
    ("delivery", "deliver"),
    ("dispatch", "ship"),
    ("shipment", "ship"),
    ("cancellation", "cancel"),
    ("reimburse", "refund"),
    ("reimbursement", "refund"),
    ("purchase", "order"),
    ("decline", "deny"),
    ("reject", "deny"),
    ("refuse", "deny"),
    ("accept", "approve"),
    ("success", "succeed"),
    ("successful", "succeed"),
    ("cost", "price"),
    ("charge", "price"),
    ("fee", "price"),
    ("amount", "price"),
    ("total", "price"),
];

/// Words that state the status of something. When the expected text uses one, the answer must
/// use it too (in any inflection or through a synonym): a paraphrase may not drop it.
pub const STATUSES: &[&str] = &[
    "shipped",
    "dispatched",
    "delivered",
    "cancelled",
    "canceled",
    "refunded",
    "pending",
    "approved",
    "accepted",
    "denied",
    "declined",
    "rejected",
    "found",
    "paid",
    "unpaid",
    "overdue",
    "active",
    "inactive",
    "suspended",
    "open",
    "closed",
    "expired",
    "failed",
    "succeeded",
    "completed",
    "confirmed",
    "returned",
    "lost",
];

/// Statuses that cannot both hold: an answer that uses the right-hand word where the expected
/// text uses the left-hand one (or the reverse) contradicts it.
pub const CONFLICTS: &[(&str, &str)] = &[
    ("shipped", "cancelled"),
    ("shipped", "pending"),
    ("shipped", "lost"),
    ("delivered", "cancelled"),
    ("delivered", "pending"),
    ("delivered", "lost"),
    ("refunded", "denied"),
    ("refunded", "pending"),
    ("approved", "denied"),
    ("approved", "pending"),
    ("approved", "cancelled"),
    ("denied", "confirmed"),
    ("denied", "pending"),
    ("cancelled", "confirmed"),
    ("cancelled", "completed"),
    ("cancelled", "active"),
    ("completed", "pending"),
    ("completed", "failed"),
    ("succeeded", "failed"),
    ("approved", "failed"),
    ("paid", "unpaid"),
    ("paid", "overdue"),
    ("active", "inactive"),
    ("active", "suspended"),
    ("active", "expired"),
    ("open", "closed"),
];

/// Month names and abbreviations, January first.
pub const MONTHS: [&[&str]; 12] = [
    &["january", "jan"],
    &["february", "feb"],
    &["march", "mar"],
    &["april", "apr"],
    &["may"],
    &["june", "jun"],
    &["july", "jul"],
    &["august", "aug"],
    &["september", "sep", "sept"],
    &["october", "oct"],
    &["november", "nov"],
    &["december", "dec"],
];

pub const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Number words read as digits. `one` is left out: it is far more often a pronoun.
pub const NUMBER_WORDS: [(&str, u32); 11] = [
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
];

/// What a word is in the lists above. Every word of every compared text is looked up in
/// them, so they are read once into one map ([`roles`]) instead of scanned a list at a time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Roles {
    pub negation: bool,
    /// A stopword or a courtesy word ([`FILLER`]): no content.
    pub empty: bool,
    pub status: bool,
    /// 1-based.
    pub month: Option<usize>,
    /// Index into [`WEEKDAYS`].
    pub weekday: Option<usize>,
    pub number: Option<u32>,
}

/// The roles of `word` (lowercase, as read).
pub fn roles(word: &str) -> Roles {
    ROLES.get(word).copied().unwrap_or_default()
}

static ROLES: LazyLock<HashMap<&'static str, Roles>> = LazyLock::new(|| {
    let mut roles: HashMap<&'static str, Roles> = HashMap::new();
    let mut mark = |words: &[&'static str], set: &dyn Fn(&mut Roles)| {
        for &word in words {
            set(roles.entry(word).or_default());
        }
    };
    mark(NEGATIONS, &|r| r.negation = true);
    mark(STOPWORDS, &|r| r.empty = true);
    mark(FILLER, &|r| r.empty = true);
    mark(STATUSES, &|r| r.status = true);
    for (month, names) in MONTHS.iter().enumerate() {
        mark(names, &|r| r.month = Some(month + 1));
    }
    for (day, name) in WEEKDAYS.iter().enumerate() {
        mark(&[name], &|r| r.weekday = Some(day));
    }
    for &(name, value) in &NUMBER_WORDS {
        mark(&[name], &|r| r.number = Some(value));
    }
    roles
});

/// [`PHRASES`] split into words once.
pub fn phrases() -> &'static [(Vec<&'static str>, &'static str)] {
    static SPLIT: LazyLock<Vec<(Vec<&'static str>, &'static str)>> = LazyLock::new(|| {
        PHRASES
            .iter()
            .map(|&(phrase, replacement)| (phrase.split(' ').collect(), replacement))
            .collect()
    });
    &SPLIT
}

#[cfg(test)]
mod tests {
    use super::{Roles, roles};

    #[test]
    fn a_word_has_every_role_its_lists_give_it() {
        let may = roles("may");
        assert_eq!(
            (may.empty, may.month),
            (true, Some(5)),
            "a stopword and a month"
        );
        assert!(roles("never").negation && !roles("never").empty);
        assert!(roles("shipped").status);
        assert_eq!(roles("sunday").weekday, Some(6));
        assert_eq!(roles("twelve").number, Some(12));
        assert!(roles("thanks").empty, "a courtesy word");
        assert_eq!(roles("parcel"), Roles::default());
    }
}
