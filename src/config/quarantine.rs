//! `quarantine:` in goldgate.yaml: cases that must not block a pull request for now, each with
//! an owner, a reason and an expiry date, so that a known-bad case cannot be forgotten.
//!
//! ```yaml
//! quarantine:
//!   - case: evals/billing.yaml#refund_over_limit   # file#id, or an id alone
//!     owner: "@maria"
//!     reason: upstream refund API flaky, INC-2211
//!     expires: 2026-12-31                          # the last day it holds
//! ```
//!
//! A quarantined case still runs and is reported everywhere; its failure never fails the run,
//! and the gate leaves it out of every decision. From the day after `expires` it blocks again,
//! and the reports say its quarantine expired.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostics};
use crate::results::{CaseResult, Quarantine};
use crate::yaml::{Fields, Node};

/// One entry of `quarantine:`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// `file#id` (matched as [`crate::shard::key`] normalises it), or an id alone (any file).
    pub case: String,
    pub owner: String,
    pub reason: String,
    pub expires: Date,
    /// The config file the entry is written in, as given, and its line there.
    pub file: Arc<Path>,
    pub line: u32,
}

/// What an entry's `case` names: a case by its key, normalised as [`crate::shard::key`] keys
/// cases (so that `./a.yaml#x` and `a.yaml#x` are one case), or an id alone, in any file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Named {
    Key(String),
    Id(String),
}

impl Named {
    fn of(case: &str) -> Named {
        match case.rsplit_once('#') {
            Some((file, id)) => Named::Key(crate::shard::key(file, id)),
            None => Named::Id(case.to_owned()),
        }
    }

    fn id(&self) -> &str {
        match self {
            Named::Key(key) => key.rsplit_once('#').map_or(key.as_str(), |(_, id)| id),
            Named::Id(id) => id,
        }
    }

    fn names(&self, case: &CaseResult) -> bool {
        self.names_case(&case.key(), &case.id)
    }

    /// Names the case whose key ([`crate::shard::key`]) and id are these.
    fn names_case(&self, case_key: &str, case_id: &str) -> bool {
        match self {
            Named::Key(key) => case_key == key,
            Named::Id(id) => case_id == id,
        }
    }
}

/// The entries that name none of `cases` (each its key and id): `lint` warns of them, as a run
/// does of those that name no case it played.
pub fn naming_none<'a>(entries: &'a [Entry], cases: &[(String, &str)]) -> Vec<&'a Entry> {
    let names_one = |entry: &&Entry| {
        let named = Named::of(&entry.case);
        cases.iter().any(|(key, id)| named.names_case(key, id))
    };
    entries.iter().filter(|e| !names_one(e)).collect()
}

/// A calendar day, `YYYY-MM-DD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl Date {
    /// `YYYY-MM-DD`, a day that exists.
    pub fn parse(text: &str) -> Option<Date> {
        let mut parts = text.trim().splitn(3, '-');
        let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
        if year.len() != 4 || month.len() != 2 || day.len() != 2 {
            return None;
        }
        let date = Date {
            year: year.parse().ok()?,
            month: month.parse().ok()?,
            day: day.parse().ok()?,
        };
        let leap = date.year % 4 == 0 && (date.year % 100 != 0 || date.year % 400 == 0);
        let days = match date.month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        (1..=days).contains(&date.day).then_some(date)
    }

    /// Today in UTC, from the system clock (CI runners keep UTC).
    pub fn today() -> Date {
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Date::from_days(i64::try_from(seconds / 86_400).unwrap_or(0))
    }

    /// The civil date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
    fn from_days(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        Date {
            year: i32::try_from(year).unwrap_or(i32::MAX),
            month: u32::try_from(month).unwrap_or(1),
            day: u32::try_from(day).unwrap_or(1),
        }
    }
}

/// Reads `quarantine:`, a list of entries; each problem is reported with its line.
pub fn parse(node: &Node, diags: &mut Diagnostics) -> Vec<Entry> {
    if node.is_null() {
        return Vec::new();
    }
    let Some(items) = node.as_seq() else {
        node.wrong_type("a list of entries (case, owner, reason, expires)", diags)
            .field("quarantine");
        return Vec::new();
    };
    let mut first: HashMap<Named, (u32, String)> = HashMap::new();
    // By id, the first entry of each kind: an id alone overlaps every `file#id` of that id.
    let mut by_id: HashMap<(String, bool), (u32, String)> = HashMap::new();
    let mut entries = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let path = format!("quarantine[{index}]");
        let Some(entry) = parse_entry(item, &path, diags) else {
            continue;
        };
        let named = Named::of(&entry.case);
        let alone = matches!(named, Named::Id(_));
        let twice = first.get(&named).map(|(line, case)| {
            format!(
                "case `{}` is quarantined twice, at lines {line} (as `{case}`) and {}",
                entry.case, item.line
            )
        });
        let overlap = || {
            let (line, other) = by_id.get(&(named.id().to_owned(), !alone))?;
            let case = if alone { other } else { &entry.case };
            Some(format!(
                "`{}` and `{other}` (line {line}) both quarantine the case `{case}`",
                entry.case
            ))
        };
        if let Some(message) = twice.or_else(overlap) {
            diags
                .at(item)
                .error(Code::G103, message)
                .field(format!("{path}.case"))
                .hint("keep one entry per case: an id alone quarantines that id in every file");
            continue;
        }
        let seen = (item.line, entry.case.clone());
        by_id
            .entry((named.id().to_owned(), alone))
            .or_insert_with(|| seen.clone());
        first.insert(named, seen);
        entries.push(entry);
    }
    entries
}

fn parse_entry(item: &Node, path: &str, diags: &mut Diagnostics) -> Option<Entry> {
    let mut fields = Fields::of(item, path, diags)?;
    let case = fields.required_string("case", diags);
    let owner = fields.required_string("owner", diags);
    let reason = fields.required_string("reason", diags);
    let expires =
        fields
            .require("expires", "a date, YYYY-MM-DD", diags)
            .and_then(|node| {
                let text = node.scalar_text().unwrap_or_default();
                let date = Date::parse(&text);
                if date.is_none() {
                    diags.at(node).error(Code::G101, format!("`{text}` is not a date"))
                    .field(format!("{path}.expires"))
                    .hint("write the last day the quarantine holds as YYYY-MM-DD, e.g. 2026-12-31");
                }
                date
            });
    fields.finish(diags);
    let blank = |value: &Option<String>, key: &str, diags: &mut Diagnostics| {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            diags
                .at(item)
                .error(Code::G111, format!("`{key}` is empty"))
                .field(format!("{path}.{key}"))
                .hint("a quarantine names who owns the case and why it may not block");
            return true;
        }
        false
    };
    if blank(&case, "case", diags) | blank(&owner, "owner", diags) | blank(&reason, "reason", diags)
    {
        return None;
    }
    Some(Entry {
        case: case?,
        owner: owner?,
        reason: reason?,
        expires: expires?,
        file: Arc::clone(&diags.file),
        line: item.line,
    })
}

/// Marks each case an entry names with its quarantine as of `today`. Returns the entries that
/// named no case, for a warning: a typo there would leave a case blocking unnoticed.
pub fn apply<'a>(entries: &'a [Entry], cases: &mut [CaseResult], today: Date) -> Vec<&'a Entry> {
    let mut unused = Vec::new();
    for entry in entries {
        let named = Named::of(&entry.case);
        let mut found = false;
        for case in cases.iter_mut().filter(|c| named.names(c)) {
            found = true;
            case.quarantine = Some(Quarantine {
                owner: entry.owner.clone(),
                reason: entry.reason.clone(),
                expires: entry.expires.to_string(),
                expired: today > entry.expires,
            });
        }
        if !found {
            unused.push(entry);
        }
    }
    unused
}

#[cfg(test)]
mod tests {
    use super::Date;

    #[test]
    fn dates_parse_only_days_that_exist() {
        assert_eq!(
            Date::parse("2024-02-29"),
            Some(Date {
                year: 2024,
                month: 2,
                day: 29
            })
        );
        for bad in [
            "2023-02-29",
            "2026-13-01",
            "2026-04-31",
            "26-01-01",
            "2026-1-1",
            "soon",
        ] {
            assert_eq!(Date::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn days_since_the_epoch_are_civil_dates() {
        assert_eq!(Date::from_days(0).to_string(), "1970-01-01");
        assert_eq!(Date::from_days(11_016).to_string(), "2000-02-29");
        assert_eq!(Date::from_days(20_783).to_string(), "2026-11-26");
    }
}
