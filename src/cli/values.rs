//! Parsers of flag values: each error says what was wrong and what to write instead.

/// A false-alarm rate in percent, as a fraction in `(0, 1)`.
pub(super) fn false_alarm_rate(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(pct) if pct > 0.0 && pct < 100.0 => Ok(pct / 100.0),
        _ => Err(format!(
            "`{text}` is not a percentage between 0 and 100 (exclusive), such as 1 or 0.5"
        )),
    }
}

/// The help of a flag that overrides a `run:` setting, with the default written once, in
/// [`goldgate::config::RunSettings`].
pub(super) fn from_run_settings(what: &str, default: impl std::fmt::Display) -> String {
    format!("{what} [default: `run:` in goldgate.yaml, else {default}]")
}

/// A duration on the command line carries its unit: `--timeout 5` could be seconds or
/// milliseconds to whoever reads the workflow.
pub(super) fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    if !text.is_empty() && text.trim().chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!(
            "`{text}` has no unit: write `{text}s`, `{text}ms` or `{text}m`"
        ));
    }
    goldgate::config::parse_duration(text)
}

/// A count of at least one (`--concurrency 0` would run nothing).
pub(super) fn at_least_one(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a whole number")),
    }
}

/// An amount of US dollars above zero: `5`, `0.50`, `$2` (a `$` is allowed, as people write it).
pub(super) fn parse_usd(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_start_matches('$');
    match number.parse::<f64>() {
        Ok(usd) if usd > 0.0 && usd.is_finite() => Ok(usd),
        _ => Err(format!(
            "`{text}` is not an amount of US dollars above 0, such as `5` or `0.50`"
        )),
    }
}

/// The name of a secret, which the workflow also uses as an environment variable: letters,
/// digits and `_`, not starting with a digit (GitHub's rule for secret names).
pub(super) fn env_name(text: &str) -> Result<String, String> {
    let valid = text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && text.chars().next().is_some_and(|c| !c.is_ascii_digit());
    if valid && !text.to_ascii_uppercase().starts_with("GITHUB_") {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "`{text}` is not a secret name: letters, digits and `_`, not starting with a digit \
             or GITHUB_ (e.g. AGENT_TOKEN)"
        ))
    }
}
