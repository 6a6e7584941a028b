//! Tag expressions for `--filter`: a tag (`P0`), or tags joined by `and`, `or` and `not`, with
//! parentheses: `P0 and not slow`, `(billing or orders) and P1`. `not` binds tightest, then
//! `and`, then `or`, as in most query languages. A tag is any other word.

use std::fmt;

/// A parsed expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TagExpr {
    Tag(String),
    Not(Box<TagExpr>),
    And(Box<TagExpr>, Box<TagExpr>),
    Or(Box<TagExpr>, Box<TagExpr>),
}

/// Why an expression does not parse, with the text given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{text}`: {why} (write e.g. `P0 and not slow`)")]
pub struct TagExprError {
    text: String,
    why: String,
}

impl TagExpr {
    pub fn parse(text: &str) -> Result<TagExpr, TagExprError> {
        let spaced = text.replace('(', " ( ").replace(')', " ) ");
        let tokens: Vec<&str> = spaced.split_whitespace().collect();
        let fail = |why: &str| TagExprError {
            text: text.to_owned(),
            why: why.to_owned(),
        };
        let mut parser = Parser { tokens, at: 0 };
        let expr = parser.or().map_err(|why| fail(&why))?;
        match parser.tokens.get(parser.at) {
            None => Ok(expr),
            Some(extra) => Err(fail(&format!("unexpected `{extra}`"))),
        }
    }

    /// Whether a case with `tags` matches.
    pub fn matches(&self, tags: &[String]) -> bool {
        match self {
            TagExpr::Tag(tag) => tags.iter().any(|t| t == tag),
            TagExpr::Not(inner) => !inner.matches(tags),
            TagExpr::And(a, b) => a.matches(tags) && b.matches(tags),
            TagExpr::Or(a, b) => a.matches(tags) || b.matches(tags),
        }
    }
}

impl fmt::Display for TagExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TagExpr::Tag(tag) => f.write_str(tag),
            TagExpr::Not(inner) => write!(f, "not {inner}"),
            TagExpr::And(a, b) => write!(f, "({a} and {b})"),
            TagExpr::Or(a, b) => write!(f, "({a} or {b})"),
        }
    }
}

struct Parser<'a> {
    tokens: Vec<&'a str>,
    at: usize,
}

impl Parser<'_> {
    fn peek_is(&self, word: &str) -> bool {
        self.tokens
            .get(self.at)
            .is_some_and(|t| t.eq_ignore_ascii_case(word))
    }

    fn or(&mut self) -> Result<TagExpr, String> {
        self.chain("or", Self::and, TagExpr::Or)
    }

    fn and(&mut self) -> Result<TagExpr, String> {
        self.chain("and", Self::not, TagExpr::And)
    }

    /// `operand (word operand)*`, grouped from the left.
    fn chain(
        &mut self,
        word: &str,
        operand: fn(&mut Self) -> Result<TagExpr, String>,
        join: fn(Box<TagExpr>, Box<TagExpr>) -> TagExpr,
    ) -> Result<TagExpr, String> {
        let mut left = operand(self)?;
        while self.peek_is(word) {
            self.at += 1;
            left = join(Box::new(left), Box::new(operand(self)?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<TagExpr, String> {
        if self.peek_is("not") {
            self.at += 1;
            return Ok(TagExpr::Not(Box::new(self.not()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<TagExpr, String> {
        let token = self
            .tokens
            .get(self.at)
            .copied()
            .ok_or_else(|| "a tag is missing at the end".to_owned())?;
        self.at += 1;
        match token {
            "(" => {
                let inner = self.or()?;
                if self.tokens.get(self.at) != Some(&")") {
                    return Err("a `(` is not closed".to_owned());
                }
                self.at += 1;
                Ok(inner)
            }
            ")" => Err("a `)` closes nothing".to_owned()),
            word if ["and", "or"].iter().any(|w| word.eq_ignore_ascii_case(w)) => {
                Err(format!("`{word}` needs a tag before it"))
            }
            tag => Ok(TagExpr::Tag(tag.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TagExpr;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn precedence_is_not_then_and_then_or() {
        let expr = TagExpr::parse("P0 and not slow or smoke").unwrap();
        assert_eq!(expr.to_string(), "((P0 and not slow) or smoke)");
        assert!(expr.matches(&tags(&["P0"])));
        assert!(!expr.matches(&tags(&["P0", "slow"])));
        assert!(expr.matches(&tags(&["slow", "smoke"])));
        let grouped = TagExpr::parse("(billing or orders) and P1").unwrap();
        assert!(grouped.matches(&tags(&["orders", "P1"])));
        assert!(!grouped.matches(&tags(&["orders"])));
    }

    #[test]
    fn a_plain_tag_is_itself_and_broken_expressions_say_why() {
        assert_eq!(TagExpr::parse("P0").unwrap(), TagExpr::Tag("P0".into()));
        for (text, why) in [
            ("P0 and", "a tag is missing at the end"),
            ("(P0 or P1", "a `(` is not closed"),
            ("P0 )", "unexpected `)`"),
            ("and P0", "`and` needs a tag before it"),
        ] {
            let err = TagExpr::parse(text).unwrap_err().to_string();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
