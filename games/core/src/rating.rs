//! Ratings as data: a game's difficulty is a [`Model`], a file of named
//! features with a transform and a weight each, summed.
//!
//! A feature is a key of the game's published `metrics` (documented in
//! `docs/schema.md`) or `moves`, the stored solution's move count. A term
//! takes its feature, then, when it says so, less a second feature
//! (`minus`), from a constant (`from`: c - x) or short of a constant
//! (`below`: max(0, c - x)), then its `transform` (`identity`; `log2`:
//! log2 of max(1, x); `log2_1p`: log2(1 + x)), times its `weight`. The
//! difficulty is `bias` plus the terms in file order, rounded to six
//! decimals: a deterministic function of the level and its analysis.
//!
//! Each game's built-in model is a file in `games/models/` (its
//! [`crate::Game::RATING_MODEL`]); a model is named by its `name`, `version`
//! and the SHA-256 of its text ([`Model::sha256`]).

use serde::{Deserialize, Serialize};

pub use crate::metrics::rounded_rating;
use crate::metrics::{MetricDoc, Metrics};

/// A rating model: the features a game's difficulty is made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The model's name, e.g. `sokoban-default`.
    pub name: String,
    /// Its version: a change of weights is a new version.
    pub version: u32,
    /// The game it rates.
    pub game: String,
    /// What it is and where it comes from.
    #[serde(default)]
    pub about: String,
    /// Added to the terms.
    #[serde(default)]
    pub bias: f64,
    /// How it agrees with outside judgement, a line per measure (what
    /// calibration measured; the report shows it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agreement: Vec<String>,
    /// The terms, summed in this order.
    pub terms: Vec<Term>,
    /// The SHA-256 of the text it was read from (not part of the file).
    #[serde(skip)]
    sha256: String,
}

/// One term of a [`Model`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Term {
    /// A metric key, or `moves`.
    pub feature: String,
    /// A second feature subtracted from the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minus: Option<String>,
    /// The term takes `from - x`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<f64>,
    /// The term takes `max(0, below - x)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below: Option<f64>,
    /// Applied last, before the weight.
    #[serde(default)]
    pub transform: Transform,
    /// The term's weight.
    pub weight: f64,
    /// What the term means to a designer.
    #[serde(default)]
    pub about: String,
}

impl Term {
    /// The term's value as a formula, e.g. `log2(1 + push_nodes)`.
    pub fn shape(&self) -> String {
        let mut x = self.feature.clone();
        if let Some(m) = &self.minus {
            x = format!("{x} - {m}");
        }
        if let Some(c) = self.from {
            x = format!("{c} - {x}");
        }
        if let Some(c) = self.below {
            x = format!("max(0, {c} - {x})");
        }
        match self.transform {
            Transform::Identity => x,
            Transform::Log2 => format!("log2 max(1, {x})"),
            Transform::Log2OnePlus => format!("log2(1 + {x})"),
        }
    }
}

/// How a term's value is shaped before its weight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Transform {
    /// The value itself.
    #[default]
    #[serde(rename = "identity")]
    Identity,
    /// log2 of max(1, x).
    #[serde(rename = "log2")]
    Log2,
    /// log2(1 + x).
    #[serde(rename = "log2_1p")]
    Log2OnePlus,
}

/// Why a model cannot be read or used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RatingError {
    /// The file is not a model.
    #[error("rating model: {0}")]
    Invalid(String),
    /// The rating of a level is not a finite number (a metric of the level
    /// overflows the model): the seed's error, never a level's difficulty.
    #[error("rating model {model}: the rating is not a finite number ({rating})")]
    NotFinite {
        /// The model's name.
        model: String,
        /// What it came to.
        rating: f64,
    },
    /// A level lacks a feature the model needs.
    #[error("rating model {model}: the level has no feature `{feature}`")]
    MissingFeature {
        /// The model's name.
        model: String,
        /// The feature.
        feature: String,
    },
}

/// The largest magnitude of a model's numbers (bias, weights, `from`,
/// `below`): far past any fitted model, and far enough below `f64::MAX` that
/// a rating of sane metrics cannot overflow.
pub const MOST_COEFFICIENT: f64 = 1e12;

/// The feature every game has beside its metrics.
pub const MOVES: &str = "moves";

impl Model {
    /// Reads a model from its TOML text and checks it against `game`'s name
    /// and the features it publishes.
    pub fn parse(text: &str, game: &str, metrics: &[MetricDoc]) -> Result<Model, RatingError> {
        let mut model: Model =
            toml::from_str(text).map_err(|e| RatingError::Invalid(e.to_string()))?;
        model.sha256 = crate::digest::sha256_hex(text.as_bytes());
        let invalid = |m: String| Err(RatingError::Invalid(format!("{}: {m}", model.name)));
        if model.name.trim().is_empty() {
            return Err(RatingError::Invalid("`name` is empty".into()));
        }
        if model.game != game {
            return invalid(format!("rates `{}`, not `{game}`", model.game));
        }
        if model.terms.is_empty() {
            return invalid("no terms".into());
        }
        if !model.bias.is_finite() || model.bias.abs() > MOST_COEFFICIENT {
            return invalid(format!(
                "`bias` is not a finite number within ±{MOST_COEFFICIENT:e}"
            ));
        }
        let known = |f: &str| f == MOVES || metrics.iter().any(|m| m.name == f);
        for (i, t) in model.terms.iter().enumerate() {
            let at = format!("term {} (`{}`)", i + 1, t.feature);
            for f in std::iter::once(&t.feature).chain(&t.minus) {
                if !known(f) {
                    let names: Vec<&str> = std::iter::once(MOVES)
                        .chain(metrics.iter().map(|m| m.name))
                        .collect();
                    return invalid(format!(
                        "{at}: `{f}` is not a feature of {game} (features: {})",
                        names.join(", ")
                    ));
                }
            }
            let numbers = [Some(t.weight), t.from, t.below];
            if numbers
                .iter()
                .flatten()
                .any(|x| !x.is_finite() || x.abs() > MOST_COEFFICIENT)
            {
                return invalid(format!(
                    "{at}: a number that is not finite within ±{MOST_COEFFICIENT:e} (a rating \
                     must stay finite)"
                ));
            }
            if t.from.is_some() && t.below.is_some() {
                return invalid(format!("{at}: `from` and `below` both given"));
            }
        }
        Ok(model)
    }

    /// The SHA-256 of the text the model was read from: its identity in
    /// manifests and Parquet footers.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The model as a file: the comment lines of `header`, then its TOML.
    pub fn to_file(&self, header: &str) -> String {
        let mut text: String = header.lines().map(|l| format!("# {l}\n")).collect();
        text.push_str(&toml::to_string(self).unwrap_or_default());
        text
    }

    /// Each term's contribution (weight included), in file order.
    pub fn contributions(
        &self,
        feature: impl Fn(&str) -> Option<f64>,
    ) -> Result<Vec<f64>, RatingError> {
        let values = self.values(feature)?;
        Ok(self
            .terms
            .iter()
            .zip(values)
            .map(|(t, v)| t.weight * v)
            .collect())
    }

    /// Each term's value before its weight, in file order: what
    /// calibration fits the weights to.
    pub fn values(&self, feature: impl Fn(&str) -> Option<f64>) -> Result<Vec<f64>, RatingError> {
        let value = |f: &str| {
            feature(f).ok_or_else(|| RatingError::MissingFeature {
                model: self.name.clone(),
                feature: f.to_string(),
            })
        };
        self.terms
            .iter()
            .map(|t| {
                let mut x = value(&t.feature)?;
                if let Some(other) = &t.minus {
                    x -= value(other)?;
                }
                if let Some(c) = t.from {
                    x = c - x;
                }
                if let Some(c) = t.below {
                    x = (c - x).max(0.0);
                }
                Ok(match t.transform {
                    Transform::Identity => x,
                    Transform::Log2 => x.max(1.0).log2(),
                    Transform::Log2OnePlus => (1.0 + x).log2(),
                })
            })
            .collect()
    }

    /// The difficulty: `bias` plus the contributions in order, rounded to
    /// six decimals.
    pub fn rate(&self, feature: impl Fn(&str) -> Option<f64>) -> Result<f64, RatingError> {
        let raw = self
            .contributions(feature)?
            .into_iter()
            .fold(self.bias, |sum, c| sum + c);
        let rating = rounded_rating(raw);
        if !rating.is_finite() {
            return Err(RatingError::NotFinite {
                model: self.name.clone(),
                rating,
            });
        }
        Ok(rating)
    }

    /// A level's features: its metrics, and `moves`.
    pub fn features<'a>(metrics: &'a Metrics, moves: u32) -> impl Fn(&str) -> Option<f64> + 'a {
        move |f| {
            metrics
                .get(f)
                .copied()
                .or_else(|| (f == MOVES).then_some(f64::from(moves)))
        }
    }
}

/// A band of the rating a stratum asks for (`difficulty = { min = 1.3,
/// max = 2.0 }`): only accepted levels whose difficulty lies in it count
/// toward the stratum's levels, the others are recorded as
/// `rejected: out of band`. `min` is inclusive, `max` exclusive; either may
/// be left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Band {
    /// The lowest difficulty that counts (inclusive); none: no floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// The difficulty from which a level no longer counts (exclusive); none:
    /// no ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

impl Band {
    /// Whether `difficulty` lies in the band.
    pub fn contains(&self, difficulty: f64) -> bool {
        self.min.is_none_or(|min| difficulty >= min) && self.max.is_none_or(|max| difficulty < max)
    }

    /// How far `difficulty` lies from the band (0 inside it).
    pub fn distance(&self, difficulty: f64) -> f64 {
        let below = self.min.map_or(0.0, |min| min - difficulty);
        let above = self.max.map_or(0.0, |max| difficulty - max);
        below.max(above).max(0.0)
    }

    /// Why a level of `difficulty` outside the band is refused (the
    /// `out of band` reason's detail).
    pub fn refusal_detail(&self, difficulty: f64) -> String {
        format!("difficulty {difficulty} outside the band {self}")
    }

    /// The difficulty a [`Band::refusal_detail`] names.
    pub fn difficulty_in_detail(detail: &str) -> Option<f64> {
        detail
            .strip_prefix("difficulty ")?
            .split(' ')
            .next()?
            .parse()
            .ok()
    }

    /// Checks the band: finite bounds, at least one, `min` below `max`.
    pub fn check(&self) -> Result<(), String> {
        match (self.min, self.max) {
            (None, None) => Err("give `min`, `max` or both".into()),
            (min, max) if min.into_iter().chain(max).any(|v| !v.is_finite()) => {
                Err("bounds must be finite numbers".into())
            }
            (Some(min), Some(max)) if min >= max => {
                Err(format!("`min` ({min}) must be below `max` ({max})"))
            }
            _ => Ok(()),
        }
    }
}

impl std::fmt::Display for Band {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.min, self.max) {
            (Some(min), Some(max)) => write!(f, "[{min}, {max})"),
            (Some(min), None) => write!(f, ">= {min}"),
            (None, Some(max)) => write!(f, "< {max}"),
            (None, None) => f.write_str("any"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::metric;

    /// A few of sokoban's metrics, enough for the models below.
    const DOCS: [MetricDoc; 3] = [
        metric("pushes", "count", "pushes"),
        metric("boxes", "count", "boxes"),
        metric("push_nodes", "count", "push_nodes"),
    ];

    fn model(terms: &str) -> Result<Model, RatingError> {
        let text = format!("name = \"m\"\nversion = 1\ngame = \"sokoban\"\n{terms}");
        Model::parse(&text, "sokoban", &DOCS)
    }

    #[test]
    fn a_model_says_what_is_wrong_with_it() {
        let err = model("[[terms]]\nfeature = \"fun\"\nweight = 1.0\n").expect_err("unknown");
        assert!(
            err.to_string()
                .contains("`fun` is not a feature of sokoban (features: moves, "),
            "{err}"
        );
        let err = model("[[terms]]\nfeature = \"pushes\"\nweight = inf\n").expect_err("inf");
        assert!(err.to_string().contains("not finite"), "{err}");
        let err = model("[[terms]]\nfeature = \"pushes\"\nweight = 1.0\nfrom = 1.0\nbelow = 2.0\n")
            .expect_err("both");
        assert!(err.to_string().contains("`from` and `below`"), "{err}");
        let err = model("[[terms]]\nfeature = \"pushes\"\nwieght = 1.0\n").expect_err("typo");
        assert!(err.to_string().contains("wieght"), "{err}");
        let err = model("").expect_err("no terms");
        assert!(err.to_string().contains("terms"), "{err}");
        let err = Model::parse(
            "name = \"m\"\nversion = 1\ngame = \"sokoban\"\n[[terms]]\nfeature = \"moves\"\nweight = 1.0\n",
            "tilt",
            &DOCS,
        )
        .expect_err("another game's");
        assert!(
            err.to_string().contains("rates `sokoban`, not `tilt`"),
            "{err}"
        );
    }

    #[test]
    fn each_term_shapes_its_feature_as_documented() {
        let m = model(
            "bias = 1.5\n\
             [[terms]]\nfeature = \"moves\"\nminus = \"pushes\"\nweight = 2.0\n\
             [[terms]]\nfeature = \"pushes\"\nfrom = 10.0\nweight = 1.0\n\
             [[terms]]\nfeature = \"boxes\"\nbelow = 3.0\nweight = 1.0\n\
             [[terms]]\nfeature = \"push_nodes\"\ntransform = \"log2_1p\"\nweight = 1.0\n\
             [[terms]]\nfeature = \"push_nodes\"\ntransform = \"log2\"\nweight = 1.0\n",
        )
        .expect("a model");
        let metrics: Metrics = [
            ("pushes".to_string(), 4.0),
            ("boxes".to_string(), 5.0),
            ("push_nodes".to_string(), 7.0),
        ]
        .into();
        let terms = m
            .contributions(Model::features(&metrics, 9))
            .expect("terms");
        assert_eq!(terms, [10.0, 6.0, 0.0, 3.0, 7f64.log2()]);
        let rated = m.rate(Model::features(&metrics, 9)).expect("rated");
        assert_eq!(rated, rounded_rating(1.5 + 10.0 + 6.0 + 3.0 + 7f64.log2()));
        let err = m
            .rate(Model::features(&Metrics::new(), 9))
            .expect_err("missing");
        assert!(err.to_string().contains("no feature `pushes`"), "{err}");
    }

    /// a model whose numbers can overflow is refused when read,
    /// and a rating that is not finite is an error, never a difficulty.
    #[test]
    fn ratings_are_finite_or_refused() {
        let docs = [metric("x", "count", "x")];
        let model = |weight: &str| {
            format!(
                "name = \"m\"\nversion = 1\ngame = \"g\"\n[[terms]]\nfeature = \"x\"\nweight = {weight}\n"
            )
        };
        let refused = Model::parse(&model("1e308"), "g", &docs).expect_err("refused");
        assert!(
            refused.to_string().contains("not finite within"),
            "{refused}"
        );
        let m = Model::parse(&model("1e12"), "g", &docs).expect("within the bound");
        let rated = m.rate(|_| Some(f64::MAX));
        assert!(
            matches!(rated, Err(RatingError::NotFinite { .. })),
            "{rated:?}"
        );
        assert_eq!(m.rate(|_| Some(2.0)).expect("finite"), 2e12);
    }
}
