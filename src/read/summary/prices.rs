//! Prices, and the cost a run is estimated at where its log reports none (#48): per model, USD
//! per million tokens of input, output, cache read and cache write. smart-tee ships a dated
//! table (`prices.json`, converted from litellm's by `tests/prices/from_litellm.py`); `--prices
//! FILE` replaces it with the user's own, in the same format (docs/health.md describes both).
//!
//! A model's price is found by its name as the log gives it, then without a date suffix
//! (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`), then without a provider prefix
//! (`anthropic/claude-sonnet-4-5` → `claude-sonnet-4-5`), then without both. A model not found
//! is named and not priced: never priced at zero.

use std::collections::BTreeMap;
use std::sync::{LazyLock, OnceLock};

use serde_json::Value;

use super::Summary;
use super::tokens::{ModelUse, Tokens};

/// The table smart-tee ships.
const SHIPPED_JSON: &str = include_str!("prices.json");

static SHIPPED: LazyLock<Prices> = LazyLock::new(|| {
    Prices::parse(SHIPPED_JSON).unwrap_or_else(|e| panic!("the shipped price table: {e}"))
});
static CHOSEN: OnceLock<Prices> = OnceLock::new();

/// The table estimates are made with: the one [`choose`]n (`--prices FILE`), else the shipped
/// one.
pub fn active() -> &'static Prices {
    CHOSEN.get().unwrap_or(&SHIPPED)
}

/// Makes `prices` the process's table (the binary's `--prices FILE`, once, at start); false
/// when one was chosen already.
pub fn choose(prices: Prices) -> bool {
    CHOSEN.set(prices).is_ok()
}

/// One model's prices, USD per million tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Cache reads (OpenAI's cached input); the input price when the table gives none.
    pub cache_read: Option<f64>,
    /// Cache writes (Anthropic's 5-minute cache write); the input price when none is given.
    pub cache_write: Option<f64>,
}

impl Price {
    /// What `t` costs: each kind of input at its price, output (reasoning included) at the
    /// output price; `None` when the counts are not split into input and output.
    pub fn cost(&self, t: &Tokens) -> Option<f64> {
        let split = [
            t.input,
            t.cache_read,
            t.cache_write,
            t.input_whole,
            t.output,
        ];
        if split.iter().all(Option::is_none) {
            return None;
        }
        let n = |x: Option<u64>| x.unwrap_or(0) as f64;
        let usd = n(t.input) * self.input
            + n(t.input_whole) * self.input
            + n(t.cache_read) * self.cache_read.unwrap_or(self.input)
            + n(t.cache_write) * self.cache_write.unwrap_or(self.input)
            + n(t.output) * self.output;
        Some(usd / 1e6)
    }
}

/// A price table: its date, its source and a price per model.
#[derive(Clone, Debug, PartialEq)]
pub struct Prices {
    pub date: String,
    pub source: Option<String>,
    models: BTreeMap<String, Price>,
}

impl Prices {
    /// A table in smart-tee's format: `{"date": "...", "source": "...", "unit": "USD per
    /// million tokens", "models": {NAME: {"input": N, "output": N, "cache_read": N,
    /// "cache_write": N}}}`; `source`, `unit` and the cache prices may be left out. The error
    /// says what is wrong and where.
    pub fn parse(text: &str) -> Result<Prices, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let top = v.as_object().ok_or("not a JSON object")?;
        for k in top.keys() {
            if !matches!(k.as_str(), "date" | "source" | "unit" | "models") {
                return Err(format!("unknown member {k:?} (date, source, unit, models)"));
            }
        }
        let date = top
            .get("date")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
            .ok_or("no \"date\" (the day the prices were taken, as a string)")?;
        let source = match top.get("source") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("\"source\" is not a string".into()),
        };
        if let Some(unit) = top.get("unit")
            && unit.as_str() != Some("USD per million tokens")
        {
            return Err(format!(
                "\"unit\" is {unit}: prices are \"USD per million tokens\""
            ));
        }
        let list = top
            .get("models")
            .and_then(Value::as_object)
            .ok_or("no \"models\" object")?;
        let mut models = BTreeMap::new();
        for (name, p) in list {
            let p = p
                .as_object()
                .ok_or_else(|| format!("models.{name:?} is not an object"))?;
            let field = |k: &str| -> Result<Option<f64>, String> {
                match p.get(k) {
                    None => Ok(None),
                    Some(x) => match x.as_f64() {
                        Some(f) if f >= 0.0 && f.is_finite() => Ok(Some(f)),
                        _ => Err(format!(
                            "models.{name:?}.{k} is {x}, not a price (a number, 0 or more)"
                        )),
                    },
                }
            };
            for k in p.keys() {
                if !matches!(
                    k.as_str(),
                    "input" | "output" | "cache_read" | "cache_write"
                ) {
                    return Err(format!(
                        "models.{name:?}: unknown member {k:?} (input, output, cache_read, cache_write)"
                    ));
                }
            }
            let need =
                |k: &str| field(k)?.ok_or_else(|| format!("models.{name:?} has no {k:?} price"));
            let price = Price {
                input: need("input")?,
                output: need("output")?,
                cache_read: field("cache_read")?,
                cache_write: field("cache_write")?,
            };
            models.insert(name.clone(), price);
        }
        Ok(Prices {
            date: date.to_string(),
            source,
            models,
        })
    }

    /// The price of `model`: by its name, then without a date suffix, then without a provider
    /// prefix, then without both.
    pub fn of(&self, model: &str) -> Option<&Price> {
        let bare = model.rsplit('/').next().unwrap_or(model);
        [model, undated(model), bare, undated(bare)]
            .into_iter()
            .find_map(|m| self.models.get(m))
    }
}

/// `model` without a date suffix: `-20250929`, `-2024-08-06` or `@20250929`.
fn undated(model: &str) -> &str {
    let b = model.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    let dash = |at: usize| matches!(b.get(at), Some(b'-' | b'@'));
    let n = b.len();
    if n > 9 && dash(n - 9) && digits(&b[n - 8..]) {
        return &model[..n - 9];
    }
    if n > 11
        && dash(n - 11)
        && digits(&b[n - 10..n - 6])
        && b[n - 6] == b'-'
        && digits(&b[n - 5..n - 3])
        && b[n - 3] == b'-'
        && digits(&b[n - 2..])
    {
        return &model[..n - 11];
    }
    model
}

/// Dollars added as decimals, not in binary (0.1 + 0.2 is 0.3, not 0.30000000000000004): each
/// figure rounded to 1e-12 dollar (every digit a result reports, and an estimate's product
/// of a price and a count), summed exactly, and read back as the nearest double. A figure of
/// 1e20 dollars or more, or not finite, is added in binary.
pub(super) fn sum_usd(figures: impl IntoIterator<Item = f64>) -> f64 {
    let mut units: Option<i128> = Some(0);
    let mut binary = 0.0;
    for x in figures {
        binary += x;
        units = units.zip(usd_units(x)).and_then(|(a, b)| a.checked_add(b));
    }
    units.map_or(binary, |u| {
        let (sign, u) = (if u < 0 { "-" } else { "" }, u.unsigned_abs());
        let unit = 10u128.pow(12);
        format!("{sign}{}.{:012}", u / unit, u % unit)
            .parse()
            .unwrap_or(binary)
    })
}

/// `a + b` as [`sum_usd`] adds them.
pub(super) fn add_usd(a: f64, b: f64) -> f64 {
    sum_usd([a, b])
}

/// `x` in units of 1e-12 dollar, rounded (`format!` rounds the double's exact value).
fn usd_units(x: f64) -> Option<i128> {
    if !x.is_finite() || x.abs() >= 1e20 {
        return None;
    }
    format!("{x:.12}").replace('.', "").parse().ok()
}

/// What a run cost, as reported and as estimated.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Cost {
    /// The cost the log reports (`total_cost_usd`, opencode's steps').
    pub reported: Option<f64>,
    /// The estimate of what the log reports no cost for.
    pub estimated: Option<f64>,
    /// Models used and not in the table: not priced.
    pub unpriced: Vec<String>,
    /// The date of the prices of an estimate.
    pub date: Option<String>,
}

impl Cost {
    /// The whole figure: reported and estimated, added.
    pub fn usd(&self) -> Option<f64> {
        match (self.reported, self.estimated) {
            (None, None) => None,
            (a, b) => Some(add_usd(a.unwrap_or(0.0), b.unwrap_or(0.0))),
        }
    }

    /// A run's estimate: each model's tokens at its price. A model not in the table leaves the
    /// run unpriced, named.
    pub fn estimate(models: &[(String, Tokens)], prices: &Prices) -> Cost {
        let mut usd = 0.0;
        let mut unpriced = Vec::new();
        for (model, tokens) in models {
            match prices.of(model).and_then(|p| p.cost(tokens)) {
                Some(c) => usd = add_usd(usd, c),
                None => unpriced.push(model.clone()),
            }
        }
        Cost {
            reported: None,
            estimated: (unpriced.is_empty() && !models.is_empty()).then_some(add_usd(usd, 0.0)),
            unpriced,
            date: Some(prices.date.clone()),
        }
    }

    /// Adds a conversation's estimate to a total's.
    pub fn add_estimate(&mut self, part: &Cost) {
        if let Some(e) = part.estimated {
            self.estimated = Some(add_usd(self.estimated.unwrap_or(0.0), e));
            self.date = part.date.clone();
        }
        for m in &part.unpriced {
            if !self.unpriced.contains(m) {
                self.unpriced.push(m.clone());
            }
        }
    }

    /// `no price for model X` (or `models X, Y`).
    pub fn unpriced_text(&self) -> String {
        let s = if self.unpriced.len() == 1 { "" } else { "s" };
        format!("no price for model{s} {}", self.unpriced.join(", "))
    }

    /// The `cost` line's figure: `$0.1234` reported, `~$0.6000 (estimated, prices of DATE)`,
    /// `– (no price for model X)`; a total mixing them says both parts. `None` when there is
    /// nothing to say.
    pub fn text(&self, e: impl Fn(&str) -> String) -> Option<String> {
        let date = self.date.as_deref().map(&e).unwrap_or_default();
        let unpriced = |sep: &str| {
            if self.unpriced.is_empty() {
                String::new()
            } else {
                format!("{sep}{}", e(&self.unpriced_text()))
            }
        };
        Some(match (self.reported, self.estimated) {
            (None, None) if self.unpriced.is_empty() => return None,
            (None, None) => format!("– ({})", e(&self.unpriced_text())),
            (Some(r), None) if self.unpriced.is_empty() => format!("${r:.4}"),
            (Some(r), None) => format!("${r:.4} (reported; not counted: {})", unpriced("")),
            (None, Some(x)) => format!(
                "~${x:.4} (estimated, prices of {date}{})",
                unpriced("; not counted: ")
            ),
            (Some(r), Some(x)) => format!(
                "~${:.4} (${r:.4} reported, ~${x:.4} estimated, prices of {date}{})",
                r + x,
                unpriced("; not counted: ")
            ),
        })
    }
}

impl Summary {
    /// What the run cost with `prices`: the cost its log reports, else an estimate from its
    /// tokens per model (the run's model when no model's tokens are told apart). A total adds
    /// its conversations' estimates to the cost its logs report.
    pub(super) fn cost_with(&self, prices: &Prices) -> Cost {
        if let [only] = self.parts.as_slice() {
            return only.cost_with(prices);
        }
        if !self.parts.is_empty() {
            let mut total = Cost {
                reported: self.cost(),
                ..Cost::default()
            };
            for p in &self.parts {
                if p.cost().is_none() {
                    total.add_estimate(&p.cost_with(prices));
                }
            }
            return total;
        }
        if let Some(reported) = self.cost() {
            return Cost {
                reported: Some(reported),
                ..Cost::default()
            };
        }
        let usage = self.usage();
        if !usage.tokens.is_known() {
            return Cost::default();
        }
        let mut models: Vec<(String, Tokens)> = usage
            .models
            .into_iter()
            .filter(|(_, u)| u.tokens.total().is_some_and(|n| n > 0))
            .map(|(m, u)| (m, u.tokens))
            .collect();
        if models.is_empty() {
            let model = self.model().unwrap_or_else(|| "unknown".into());
            models.push((model, usage.tokens));
        }
        Cost::estimate(&models, prices)
    }

    /// What the run cost, with the active table.
    pub(super) fn cost_figure(&self) -> Cost {
        self.cost_with(active())
    }
}

impl ModelUse {
    /// Adds `o`'s tokens, and its cost or, without one, its tokens to those unreported.
    pub fn add(&mut self, o: &ModelUse) {
        self.tokens.add(&o.tokens);
        match o.cost {
            Some(c) => {
                self.cost = Some(add_usd(self.cost.unwrap_or(0.0), c));
                self.unreported.add(&o.unreported);
            }
            None if o.in_priced_run => {}
            None => self.unreported.add(&o.tokens),
        }
        self.in_priced_run |= o.in_priced_run;
    }

    /// The cost of model `m`: the cost reported, and the estimate of the tokens that reported
    /// none at the price table's (a total of runs, some reported and some not: it was the
    /// reported part alone); `true` when an estimate is in it. `None` without a reported cost
    /// or a price.
    pub fn usd(&self, m: &str) -> (Option<f64>, bool) {
        let estimate = |t: &Tokens| active().of(m).and_then(|p| p.cost(t));
        let unreported = self.unreported.is_known() && self.unreported.total() != Some(0);
        match self.cost {
            Some(c) if unreported => match estimate(&self.unreported) {
                Some(e) => (Some(add_usd(c, e)), true),
                None => (Some(c), false),
            },
            Some(c) => (Some(c), false),
            None if self.in_priced_run => (None, false),
            None => estimate(&self.tokens).map_or((None, false), |e| (Some(add_usd(e, 0.0)), true)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, read: u64, write: u64, output: u64) -> Tokens {
        Tokens {
            input: Some(input),
            cache_read: Some(read),
            cache_write: Some(write),
            output: Some(output),
            ..Tokens::default()
        }
    }

    /// One estimate worked by hand from the shipped table's numbers: claude-sonnet-4-5 at $3
    /// input, $15 output, $0.30 cache read and $3.75 cache write per million tokens.
    #[test]
    fn an_estimate_is_each_kind_of_token_at_its_price() {
        let p = active().of("claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(
            (p.input, p.output, p.cache_read, p.cache_write),
            (3.0, 15.0, Some(0.3), Some(3.75))
        );
        let t = tokens(1_000, 2_000_000, 100_000, 10_000);
        // 0.003 + 0.6 + 0.375 + 0.15
        let by_hand = 1_000.0 * 3.0 / 1e6
            + 2_000_000.0 * 0.3 / 1e6
            + 100_000.0 * 3.75 / 1e6
            + 10_000.0 * 15.0 / 1e6;
        let c = Cost::estimate(&[("claude-sonnet-4-5-20250929".into(), t)], active());
        assert!((c.estimated.unwrap() - by_hand).abs() < 1e-12);
        assert!((by_hand - 1.128).abs() < 1e-12);
        assert_eq!(c.date.as_deref(), Some(active().date.as_str()));
        assert!(
            c.text(str::to_string)
                .unwrap()
                .starts_with("~$1.1280 (estimated, prices of ")
        );
    }

    #[test]
    fn an_unknown_model_is_named_and_not_priced() {
        let t = tokens(10, 0, 0, 10);
        let c = Cost::estimate(
            &[
                ("claude-sonnet-4-5".into(), t),
                ("my-local-model".into(), t),
            ],
            active(),
        );
        assert_eq!(c.estimated, None);
        assert_eq!(c.usd(), None);
        assert_eq!(
            c.text(str::to_string).unwrap(),
            "– (no price for model my-local-model)"
        );
    }

    #[test]
    fn names_match_exactly_then_undated_then_without_provider() {
        let p = Prices::parse(
            r#"{"date":"2026-01-02","models":{
                "m-1":{"input":1,"output":2},
                "m-1-20250101":{"input":5,"output":6},
                "gpt-4o":{"input":2.5,"output":10,"cache_read":1.25}}}"#,
        )
        .unwrap();
        assert_eq!(p.of("m-1-20250101").unwrap().input, 5.0);
        assert_eq!(p.of("m-1-20260101").unwrap().input, 1.0);
        assert_eq!(p.of("openai/gpt-4o-2024-08-06").unwrap().input, 2.5);
        assert_eq!(p.of("anthropic/m-1@20250929").unwrap().input, 1.0);
        assert!(p.of("m-12").is_none() && p.of("gpt-4").is_none());
        // No cache write price: cache writes at the input price.
        let c = p.of("gpt-4o").unwrap().cost(&tokens(0, 0, 1_000_000, 0));
        assert_eq!(c, Some(2.5));
    }

    #[test]
    fn a_bad_table_says_what_is_wrong() {
        let err = |s: &str| Prices::parse(s).unwrap_err();
        assert!(err("[").starts_with("not JSON"));
        assert!(err(r#"{"models":{}}"#).contains("no \"date\""));
        assert!(err(r#"{"date":"d","models":{"m":{"input":1}}}"#).contains("no \"output\""));
        assert!(
            err(r#"{"date":"d","models":{"m":{"input":-1,"output":1}}}"#).contains("not a price")
        );
        assert!(
            err(r#"{"date":"d","models":{"m":{"input":1,"output":1,"cache":1}}}"#)
                .contains("unknown member \"cache\"")
        );
    }

    #[test]
    fn a_total_mixing_reported_and_estimated_says_so() {
        let mut c = Cost {
            reported: Some(0.5),
            ..Cost::default()
        };
        c.add_estimate(&Cost {
            estimated: Some(0.25),
            date: Some("2026-11-20".into()),
            ..Cost::default()
        });
        c.add_estimate(&Cost {
            unpriced: vec!["x".into()],
            ..Cost::default()
        });
        assert_eq!(c.usd(), Some(0.75));
        assert_eq!(
            c.text(str::to_string).unwrap(),
            "~$0.7500 ($0.5000 reported, ~$0.2500 estimated, prices of 2026-11-20; \
             not counted: no price for model x)"
        );
    }
}
