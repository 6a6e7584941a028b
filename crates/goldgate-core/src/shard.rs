//! Shards, and the identity of a suite: `run --shard K/N` splits the cases of a suite between
//! N jobs, and every report records which suite and which shard it covers, so that
//! `goldgate merge` joins the shards of one suite and refuses anything else.
//!
//! A case's key is its file as loaded (relative to its project root, see `goldgate::project`),
//! with `\` and `/` both read as separators and `.` segments dropped (older reports named files
//! as typed), then `#` and the case id. A case belongs to shard `hash(key) mod N + 1`, where the hash is FNV-1a
//! 64: it depends on the key alone, never on the case's position, so every case falls in
//! exactly one shard whatever order files are found in, and it is the same on every platform,
//! Rust version and run (std's `DefaultHasher` promises none of that).
//!
//! The suite's fingerprint is the same hash over the sorted keys of every case selected
//! (after `--filter` and `--name`) before sharding: two reports have the same fingerprint when
//! they split the same cases.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::Case;

/// Shard K of N (both 1-based), written `K/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(try_from = "String", into = "String")]
#[cfg_attr(feature = "schema", schemars(extend("pattern" = "^[1-9][0-9]*/[1-9][0-9]*$")))]
pub struct Shard {
    index: u32,
    count: u32,
}

/// Why a `K/N` does not name a shard.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("`{0}` is not K/N (e.g. `2/3`: the second of three shards)")]
    Syntax(String),
    #[error("`{0}`: K must be between 1 and N")]
    OutOfRange(String),
}

impl Shard {
    pub fn new(index: u32, count: u32) -> Result<Self, ShardError> {
        if index == 0 || index > count {
            return Err(ShardError::OutOfRange(format!("{index}/{count}")));
        }
        Ok(Self { index, count })
    }

    /// K, from 1.
    pub fn index(self) -> u32 {
        self.index
    }

    /// N.
    pub fn count(self) -> u32 {
        self.count
    }

    /// One shard of several: part of the suite (`1/1` is the whole of it).
    pub fn is_part(self) -> bool {
        self.count > 1
    }

    /// Whether the case with this key (see [`key`]) runs in this shard.
    pub fn contains(self, key: &str) -> bool {
        stable_hash(key.as_bytes()) % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// Whether `case` runs in this shard.
    pub fn contains_case(self, case: &Case) -> bool {
        self.contains(&case_key(case))
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Self, ShardError> {
        let syntax = || ShardError::Syntax(text.to_owned());
        let (index, count) = text.trim().split_once('/').ok_or_else(syntax)?;
        let number = |part: &str| part.trim().parse::<u32>().map_err(|_| syntax());
        Shard::new(number(index)?, number(count)?)
            .map_err(|_| ShardError::OutOfRange(text.to_owned()))
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl TryFrom<String> for Shard {
    type Error = ShardError;

    fn try_from(text: String) -> Result<Self, ShardError> {
        text.parse()
    }
}

impl From<Shard> for String {
    fn from(shard: Shard) -> String {
        shard.to_string()
    }
}

/// Which cases a report covers: the suite they were selected from, and the shard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SuiteId {
    /// 16 hex digits: FNV-1a 64 over the sorted keys of every case selected before sharding.
    pub fingerprint: String,
    /// How many cases that is: those of every shard together.
    pub cases: usize,
    /// The shard this report covers; `null` for the whole suite.
    pub shard: Option<Shard>,
    /// The suite's name: the config file's path as the run was given it (`ci.yaml`); absent
    /// for the default config. It names the sticky PR comment, so that `goldgate report`
    /// of this report posts to the run's own comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl SuiteId {
    /// The identity of the suite made of `cases` (all of them, before sharding), run as `shard`.
    pub fn of<'a>(cases: impl IntoIterator<Item = &'a Case>, shard: Option<Shard>) -> Self {
        Self::of_keys(cases.into_iter().map(case_key), shard)
    }

    /// The identity of the suite of the cases with these keys ([`key`]), run as `shard`.
    pub fn of_keys(keys: impl IntoIterator<Item = String>, shard: Option<Shard>) -> Self {
        let mut keys: Vec<String> = keys.into_iter().collect();
        keys.sort_unstable();
        let mut bytes = Vec::with_capacity(keys.iter().map(|key| 8 + key.len()).sum());
        for key in &keys {
            // Length-prefixed, so that no two lists of keys give the same bytes.
            bytes.extend_from_slice(&(key.len() as u64).to_le_bytes());
            bytes.extend_from_slice(key.as_bytes());
        }
        Self {
            fingerprint: format!("{:016x}", stable_hash(&bytes)),
            cases: keys.len(),
            shard,
            name: None,
        }
    }
}

impl SuiteId {
    /// How `self` and `other` are not one suite, in words; `None` when their fingerprints agree
    /// (their shards may differ: the fingerprint is taken before sharding).
    pub fn difference(&self, other: &SuiteId) -> Option<String> {
        (self.fingerprint != other.fingerprint).then(|| {
            format!(
                "suite fingerprints {} ({} cases) and {} ({} cases): other goldens, or another --filter / --name",
                self.fingerprint, self.cases, other.fingerprint, other.cases
            )
        })
    }
}

/// The key a case is sharded and identified by: its normalised file, `#`, its id.
pub fn key(file: &str, id: &str) -> String {
    // Built in one buffer: a run asks for every case's key several times.
    let mut key = String::with_capacity(file.len() + id.len() + 1);
    if file.starts_with(['/', '\\']) {
        key.push('/');
    }
    for segment in file
        .split(['/', '\\'])
        .filter(|s| !s.is_empty() && *s != ".")
    {
        if !key.is_empty() && !key.ends_with('/') {
            key.push('/');
        }
        key.push_str(segment);
    }
    key.push('#');
    key.push_str(id);
    key
}

/// [`key`] of a loaded case.
pub fn case_key(case: &Case) -> String {
    key(&case.location.file.to_string_lossy(), &case.id)
}

/// FNV-1a 64 (http://www.isthe.com/chongo/tech/comp/fnv/): small, and stable across
/// platforms, Rust versions and runs.
pub fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::{Shard, ShardError, key, stable_hash};

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        assert_eq!(stable_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(stable_hash(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn shards_parse_and_refuse_nonsense() {
        let shard: Shard = "2/3".parse().unwrap();
        assert_eq!(
            (shard.index(), shard.count(), shard.to_string()),
            (2, 3, "2/3".into())
        );
        assert_eq!(" 1 / 1 ".parse::<Shard>().unwrap().to_string(), "1/1");
        for text in ["0/3", "4/3", "1/0", "0/0"] {
            assert_eq!(
                text.parse::<Shard>(),
                Err(ShardError::OutOfRange(text.into()))
            );
        }
        for text in ["x", "1", "1/", "/3", "-1/3", "1/3/5", "a/b", ""] {
            assert_eq!(text.parse::<Shard>(), Err(ShardError::Syntax(text.into())));
        }
        assert!(
            ShardError::OutOfRange("4/3".into())
                .to_string()
                .contains("between 1 and N")
        );
    }

    #[test]
    fn keys_agree_across_separators() {
        assert_eq!(
            key("evals/goldens/orders.yaml", "a"),
            "evals/goldens/orders.yaml#a"
        );
        assert_eq!(
            key("evals\\goldens\\orders.yaml", "a"),
            "evals/goldens/orders.yaml#a"
        );
        assert_eq!(
            key("./evals//goldens/./orders.yaml", "a"),
            "evals/goldens/orders.yaml#a"
        );
        assert_eq!(key("/abs/orders.yaml", "a"), "/abs/orders.yaml#a");
    }

    #[test]
    fn every_key_is_in_exactly_one_shard() {
        for count in 1..=7 {
            for n in 0..200 {
                let key = key("goldens/set.yaml", &format!("case-{n}"));
                let owners = (1..=count)
                    .filter(|&k| Shard::new(k, count).unwrap().contains(&key))
                    .count();
                assert_eq!(owners, 1, "{key} in {owners} of {count} shards");
            }
        }
    }

    #[test]
    fn shards_round_trip_as_text_in_json() {
        let shard = Shard::new(3, 4).unwrap();
        assert_eq!(serde_json::to_string(&shard).unwrap(), "\"3/4\"");
        let back: Shard = serde_json::from_str("\"3/4\"").unwrap();
        assert_eq!(back, shard);
        assert!(serde_json::from_str::<Shard>("\"5/4\"").is_err());
    }
}
