//! Run limits: validation of a RunPolicy's numeric caps and the per-run accounting that enforces
//! them. The cancel callback stays on the Python side; everything countable lives here.
//!
//! Admission is checked before work starts (an LLM call, a tool execution), so a call past a cap
//! never starts. Tokens are only known after a response, so the token cap is checked both before
//! the next call (`>=`) and right after a response (`>`).

use std::fmt;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolicyError {
    #[error("RunPolicy.{field} must be an integer >= {min} or None, got {got}")]
    BadCount {
        field: &'static str,
        min: u64,
        got: String,
    },
    #[error("RunPolicy.deadline_seconds must be a positive number or None, got {got}")]
    BadDeadline { got: String },
}

/// The numeric part of a RunPolicy, validated.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunLimits {
    pub max_llm_calls: Option<u64>,
    pub max_tool_calls: Option<u64>,
    pub max_tokens: Option<u64>,
    pub deadline_seconds: Option<f64>,
}

fn count(field: &'static str, value: Option<i64>) -> Result<Option<u64>, PolicyError> {
    let min = RunLimits::min_count(field);
    match value {
        None => Ok(None),
        Some(v) if v >= 0 && (v as u64) >= min => Ok(Some(v as u64)),
        Some(v) => Err(PolicyError::BadCount {
            field,
            min,
            got: v.to_string(),
        }),
    }
}

impl RunLimits {
    /// The smallest value a count field accepts: `max_tool_calls` may be 0 (no tool may run).
    pub fn min_count(field: &str) -> u64 {
        if field == "max_tool_calls" {
            0
        } else {
            1
        }
    }

    /// Validate raw values: `max_llm_calls >= 1`, `max_tool_calls >= 0` (0 = no tool may run),
    /// `max_tokens >= 1`, `deadline_seconds` finite and > 0.
    pub fn new(
        max_llm_calls: Option<i64>,
        max_tool_calls: Option<i64>,
        max_tokens: Option<i64>,
        deadline_seconds: Option<f64>,
    ) -> Result<RunLimits, PolicyError> {
        let deadline_seconds = match deadline_seconds {
            None => None,
            Some(d) if d.is_finite() && d > 0.0 => Some(d),
            Some(d) => {
                return Err(PolicyError::BadDeadline {
                    got: format!("{d:?}"),
                })
            }
        };
        Ok(RunLimits {
            max_llm_calls: count("max_llm_calls", max_llm_calls)?,
            max_tool_calls: count("max_tool_calls", max_tool_calls)?,
            max_tokens: count("max_tokens", max_tokens)?,
            deadline_seconds,
        })
    }

    /// Any numeric cap makes tool calls run one at a time, so each admission is exact.
    pub fn has_numeric_cap(&self) -> bool {
        self.max_llm_calls.is_some() || self.max_tool_calls.is_some() || self.max_tokens.is_some()
    }

    pub fn is_empty(&self) -> bool {
        !self.has_numeric_cap() && self.deadline_seconds.is_none()
    }
}

/// Which limit stopped a run. `Display` is the exception message.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LimitExceeded {
    Deadline(f64),
    Tokens(u64),
    LlmCalls(u64),
    ToolCalls(u64),
}

impl LimitExceeded {
    pub fn kind(&self) -> &'static str {
        match self {
            LimitExceeded::Deadline(_) => "deadline",
            LimitExceeded::Tokens(_) => "tokens",
            LimitExceeded::LlmCalls(_) => "llm_calls",
            LimitExceeded::ToolCalls(_) => "tool_calls",
        }
    }
}

impl fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitExceeded::Deadline(d) => write!(f, "exceeded wall-clock time limit {d}s"),
            LimitExceeded::Tokens(n) => write!(f, "exceeded token limit {n}"),
            LimitExceeded::LlmCalls(n) => write!(f, "exceeded LLM call limit {n}"),
            LimitExceeded::ToolCalls(n) => write!(f, "exceeded tool call limit {n}"),
        }
    }
}

/// Counters of one run, checked against its limits. Elapsed time is passed in by the caller so
/// the core needs no clock of its own (and tests need no sleeping).
#[derive(Debug, Clone, Default)]
pub struct RunBudget {
    pub limits: RunLimits,
    pub llm_calls: u64,
    pub tool_calls: u64,
    pub total_tokens: u64,
}

impl RunBudget {
    pub fn new(limits: RunLimits) -> RunBudget {
        RunBudget {
            limits,
            ..RunBudget::default()
        }
    }

    fn check_common(&self, elapsed: f64) -> Result<(), LimitExceeded> {
        if let Some(d) = self.limits.deadline_seconds {
            if elapsed >= d {
                return Err(LimitExceeded::Deadline(d));
            }
        }
        if let Some(t) = self.limits.max_tokens {
            if self.total_tokens >= t {
                return Err(LimitExceeded::Tokens(t));
            }
        }
        Ok(())
    }

    /// May another LLM call start?
    pub fn admit_llm(&self, elapsed: f64) -> Result<(), LimitExceeded> {
        self.check_common(elapsed)?;
        match self.limits.max_llm_calls {
            Some(n) if self.llm_calls >= n => Err(LimitExceeded::LlmCalls(n)),
            _ => Ok(()),
        }
    }

    /// May another tool execution start? Call only for calls that passed every gate, so refused
    /// calls never consume the budget.
    pub fn admit_tool(&self, elapsed: f64) -> Result<(), LimitExceeded> {
        self.check_common(elapsed)?;
        match self.limits.max_tool_calls {
            Some(n) if self.tool_calls >= n => Err(LimitExceeded::ToolCalls(n)),
            _ => Ok(()),
        }
    }

    /// Account for a finished LLM call; fails when its tokens went past the cap.
    pub fn record_llm(&mut self, tokens: u64, elapsed: f64) -> Result<(), LimitExceeded> {
        self.llm_calls += 1;
        self.total_tokens = self.total_tokens.saturating_add(tokens);
        if let Some(t) = self.limits.max_tokens {
            if self.total_tokens > t {
                return Err(LimitExceeded::Tokens(t));
            }
        }
        match self.limits.deadline_seconds {
            Some(d) if elapsed >= d => Err(LimitExceeded::Deadline(d)),
            _ => Ok(()),
        }
    }

    /// Account for a tool execution that started.
    pub fn record_tool(&mut self) {
        self.tool_calls += 1;
    }

    /// Seconds left before the deadline (never negative), or None without one. The executor
    /// caps each tool call's timeout with it, so a run cannot hang in a tool past its deadline.
    pub fn time_left(&self, elapsed: f64) -> Option<f64> {
        self.limits.deadline_seconds.map(|d| (d - elapsed).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_bounds_and_messages() {
        assert!(RunLimits::new(None, None, None, None).unwrap().is_empty());
        assert_eq!(
            RunLimits::new(Some(0), None, None, None)
                .unwrap_err()
                .to_string(),
            "RunPolicy.max_llm_calls must be an integer >= 1 or None, got 0"
        );
        assert!(RunLimits::new(None, Some(0), None, None).is_ok());
        assert_eq!(
            RunLimits::new(None, Some(-1), None, None)
                .unwrap_err()
                .to_string(),
            "RunPolicy.max_tool_calls must be an integer >= 0 or None, got -1"
        );
        assert!(RunLimits::new(None, None, Some(0), None).is_err());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = RunLimits::new(None, None, None, Some(bad)).unwrap_err();
            assert!(e
                .to_string()
                .starts_with("RunPolicy.deadline_seconds must be a positive number"));
        }
    }

    #[test]
    fn numeric_caps_disable_parallelism_but_deadline_does_not() {
        assert!(!RunLimits::new(None, None, None, Some(5.0))
            .unwrap()
            .has_numeric_cap());
        assert!(RunLimits::new(None, Some(3), None, None)
            .unwrap()
            .has_numeric_cap());
        assert!(RunLimits::new(Some(3), None, None, None)
            .unwrap()
            .has_numeric_cap());
        assert!(RunLimits::new(None, None, Some(3), None)
            .unwrap()
            .has_numeric_cap());
    }

    #[test]
    fn tool_cap_is_exact() {
        let mut b = RunBudget::new(RunLimits::new(None, Some(2), None, None).unwrap());
        for _ in 0..2 {
            b.admit_tool(0.0).unwrap();
            b.record_tool();
        }
        let e = b.admit_tool(0.0).unwrap_err();
        assert_eq!(e.to_string(), "exceeded tool call limit 2");
        assert_eq!(e.kind(), "tool_calls");
        assert_eq!(b.tool_calls, 2);
    }

    #[test]
    fn zero_tool_cap_refuses_first_execution() {
        let b = RunBudget::new(RunLimits::new(None, Some(0), None, None).unwrap());
        assert_eq!(b.admit_tool(0.0), Err(LimitExceeded::ToolCalls(0)));
        assert!(b.admit_llm(0.0).is_ok());
    }

    #[test]
    fn llm_cap_and_tokens() {
        let mut b = RunBudget::new(RunLimits::new(Some(2), None, Some(100), None).unwrap());
        b.admit_llm(0.0).unwrap();
        b.record_llm(60, 0.0).unwrap();
        b.admit_llm(0.0).unwrap();
        // Reaching the cap exactly is allowed after the response, but blocks the next call.
        b.record_llm(40, 0.0).unwrap();
        assert_eq!(b.admit_llm(0.0), Err(LimitExceeded::Tokens(100)));
        let mut over = RunBudget::new(RunLimits::new(None, None, Some(10), None).unwrap());
        assert_eq!(over.record_llm(11, 0.0), Err(LimitExceeded::Tokens(10)));
        let mut calls = RunBudget::new(RunLimits::new(Some(1), None, None, None).unwrap());
        calls.record_llm(0, 0.0).unwrap();
        assert_eq!(
            calls.admit_llm(0.0).unwrap_err().to_string(),
            "exceeded LLM call limit 1"
        );
    }

    #[test]
    fn time_left_counts_down_to_zero() {
        let b = RunBudget::new(RunLimits::new(None, None, None, Some(2.0)).unwrap());
        assert_eq!(b.time_left(0.5), Some(1.5));
        assert_eq!(b.time_left(3.0), Some(0.0));
        assert_eq!(RunBudget::default().time_left(1.0), None);
    }

    #[test]
    fn deadline_checked_everywhere() {
        let mut b = RunBudget::new(RunLimits::new(None, None, None, Some(1.5)).unwrap());
        assert!(b.admit_llm(1.0).is_ok());
        assert_eq!(
            b.admit_tool(1.5).unwrap_err().to_string(),
            "exceeded wall-clock time limit 1.5s"
        );
        assert_eq!(b.record_llm(1, 2.0), Err(LimitExceeded::Deadline(1.5)));
    }
}
