//! Calibration: a rating model's weights fitted to labelled levels.
//!
//! A level's label is an ordinal class (easiest first: say Boxoban's
//! `unfiltered`, `medium`, `hard` as 0, 1, 2, or playtest success and
//! failure) or a value (a solve time). Each level's terms' values come from a
//! base model ([`Model::values`]); the weights and bias are then fitted by
//! ridge least squares of the label on those values, in closed form:
//! standardized values, `w = (X'X + λI)⁻¹ X'y` by Gaussian elimination,
//! weights scaled back. So the fitted difficulty reads on the labels' scale.
//! Agreement is measured by k-fold cross-validation (a level's fold is its
//! index modulo k, in input order): for classes, for every pair, the AUC of
//! the held-out ratings (the chance that a level of the harder class rates
//! above one of the easier; ties count half); for values, Spearman's rank
//! correlation of the held-out ratings with them. Each comes with a 95%
//! bootstrap interval from 1,000 resamples drawn by the portable PRNG, seed
//! 1. The same input gives the same model and the same figures.

use pregen_games::rating::Model;
use pregen_games::rng::Rng;

/// One labelled level: its label and its terms' values.
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    /// The label: a class index (0 the easiest) or a value.
    pub label: f64,
    /// The base model's term values ([`Model::values`]).
    pub values: Vec<f64>,
}

/// How to fit.
#[derive(Debug, Clone, Copy)]
pub struct CalibrateConfig {
    /// Cross-validation folds.
    pub folds: usize,
    /// The ridge weight on standardized values (keeps a constant or
    /// collinear term from making the system singular).
    pub ridge: f64,
    /// Bootstrap resamples for each interval.
    pub resamples: usize,
}

impl Default for CalibrateConfig {
    fn default() -> Self {
        CalibrateConfig {
            folds: 5,
            ridge: 1e-3,
            resamples: 1000,
        }
    }
}

/// What the labels are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Labels {
    /// Ordinal classes 0, 1, 2...: agreement is AUC per pair.
    Classes,
    /// Values, such as solve times: agreement is Spearman's correlation.
    Values,
}

/// What an agreement figure measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// AUC between two classes (their indices).
    Auc {
        /// The easier class.
        easier: usize,
        /// The harder class.
        harder: usize,
    },
    /// Spearman's rank correlation with the values.
    Spearman,
}

/// One agreement figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Agreement {
    /// What it measures.
    pub measure: Measure,
    /// The figure.
    pub value: f64,
    /// Its 95% bootstrap interval.
    pub interval: (f64, f64),
}

/// A fitted model and how well it agrees with the labels.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The base model with fitted weights and bias.
    pub model: Model,
    /// Cross-validated agreement (every pair of classes, or Spearman).
    pub agreement: Vec<Agreement>,
    /// The same for the base model as it was (not fitted).
    pub base_agreement: Vec<Agreement>,
}

/// Fits `base`'s weights to `levels` (of at least two classes, or two
/// values).
pub fn calibrate(
    base: &Model,
    levels: &[Labelled],
    labels: Labels,
    config: CalibrateConfig,
) -> Result<Calibration, String> {
    let classes = levels
        .iter()
        .map(|l| l.label as usize + 1)
        .max()
        .unwrap_or(0);
    let present: Vec<usize> = (0..classes)
        .filter(|&c| levels.iter().any(|l| l.label as usize == c))
        .collect();
    let distinct = levels.iter().any(|l| l.label != levels[0].label);
    if labels == Labels::Classes && present.len() < 2 || !distinct {
        return Err("calibration needs levels of at least two classes (or label values)".into());
    }
    if config.folds < 2 || levels.len() < 2 * config.folds {
        return Err(format!(
            "{} levels are too few for {} folds",
            levels.len(),
            config.folds
        ));
    }
    let (weights, bias) = fit(levels, config.ridge)?;
    let mut held_out = vec![0.0; levels.len()];
    for fold in 0..config.folds {
        let train: Vec<Labelled> = levels
            .iter()
            .enumerate()
            .filter(|(i, _)| i % config.folds != fold)
            .map(|(_, l)| l.clone())
            .collect();
        let (w, b) = fit(&train, config.ridge)?;
        for (i, l) in levels.iter().enumerate() {
            if i % config.folds == fold {
                held_out[i] = score(&w, b, &l.values);
            }
        }
    }
    let base_weights: Vec<f64> = base.terms.iter().map(|t| t.weight).collect();
    let base_scores: Vec<f64> = levels
        .iter()
        .map(|l| score(&base_weights, base.bias, &l.values))
        .collect();
    let mut model = base.clone();
    model.bias = bias;
    for (term, w) in model.terms.iter_mut().zip(weights) {
        term.weight = w;
    }
    let measure = |scores: &[f64]| match labels {
        Labels::Classes => agreement(levels, scores, &present, config.resamples),
        Labels::Values => vec![spearman_agreement(levels, scores, config.resamples)],
    };
    Ok(Calibration {
        model,
        agreement: measure(&held_out),
        base_agreement: measure(&base_scores),
    })
}

fn score(weights: &[f64], bias: f64, values: &[f64]) -> f64 {
    weights
        .iter()
        .zip(values)
        .fold(bias, |sum, (w, v)| sum + w * v)
}

/// Ridge least squares of the class on the values: (weights, bias).
fn fit(levels: &[Labelled], ridge: f64) -> Result<(Vec<f64>, f64), String> {
    let n = levels.len() as f64;
    let k = levels.first().map_or(0, |l| l.values.len());
    let mean: Vec<f64> = (0..k)
        .map(|j| levels.iter().map(|l| l.values[j]).sum::<f64>() / n)
        .collect();
    let spread: Vec<f64> = (0..k)
        .map(|j| {
            let var = levels
                .iter()
                .map(|l| (l.values[j] - mean[j]).powi(2))
                .sum::<f64>()
                / n;
            if var > 0.0 { var.sqrt() } else { 1.0 }
        })
        .collect();
    let y_mean = levels.iter().map(|l| l.label).sum::<f64>() / n;
    // Normal equations on standardized values, centred target.
    let mut a = vec![vec![0.0; k + 1]; k];
    for l in levels {
        let z: Vec<f64> = (0..k)
            .map(|j| (l.values[j] - mean[j]) / spread[j])
            .collect();
        let y = l.label - y_mean;
        for r in 0..k {
            for c in 0..k {
                a[r][c] += z[r] * z[c] / n;
            }
            a[r][k] += z[r] * y / n;
        }
    }
    for (r, row) in a.iter_mut().enumerate() {
        row[r] += ridge;
    }
    let beta = solve(a).ok_or("the terms' values are degenerate: no fit")?;
    let weights: Vec<f64> = (0..k).map(|j| beta[j] / spread[j]).collect();
    let bias = y_mean - (0..k).map(|j| weights[j] * mean[j]).sum::<f64>();
    if weights.iter().chain([&bias]).any(|w| !w.is_finite()) {
        return Err("the fit is not finite".into());
    }
    Ok((weights, bias))
}

/// Solves the augmented system `a` (k rows of k + 1) by Gaussian
/// elimination with partial pivoting.
fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let k = a.len();
    for col in 0..k {
        let pivot = (col..k).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        let pivot_row = a[col].clone();
        for (row, values) in a.iter_mut().enumerate() {
            if row != col {
                let f = values[col] / pivot_row[col];
                for (v, p) in values[col..].iter_mut().zip(&pivot_row[col..]) {
                    *v -= f * p;
                }
            }
        }
    }
    Some((0..k).map(|r| a[r][k] / a[r][r]).collect())
}

/// AUC of every pair of present classes, with bootstrap intervals.
fn agreement(
    levels: &[Labelled],
    scores: &[f64],
    present: &[usize],
    resamples: usize,
) -> Vec<Agreement> {
    let of = |c: usize| -> Vec<f64> {
        levels
            .iter()
            .zip(scores)
            .filter(|(l, _)| l.label as usize == c)
            .map(|(_, &s)| s)
            .collect()
    };
    let mut rng = Rng::new(1);
    let mut out = Vec::new();
    for (i, &easier) in present.iter().enumerate() {
        for &harder in &present[i + 1..] {
            let (e, h) = (of(easier), of(harder));
            let mut draws: Vec<f64> = (0..resamples)
                .map(|_| {
                    let pick = |v: &[f64], rng: &mut Rng| -> Vec<f64> {
                        (0..v.len())
                            .map(|_| v[(rng.next_u64() % v.len() as u64) as usize])
                            .collect()
                    };
                    let (be, bh) = (pick(&e, &mut rng), pick(&h, &mut rng));
                    auc(&be, &bh)
                })
                .collect();
            draws.sort_by(f64::total_cmp);
            let at = |q: f64| draws[((q * resamples as f64) as usize).min(resamples - 1)];
            out.push(Agreement {
                measure: Measure::Auc { easier, harder },
                value: auc(&e, &h),
                interval: (at(0.025), at(0.975)),
            });
        }
    }
    out
}

/// Spearman's correlation of `scores` with the levels' labels, with its
/// bootstrap interval.
fn spearman_agreement(levels: &[Labelled], scores: &[f64], resamples: usize) -> Agreement {
    let pairs: Vec<(f64, f64)> = levels
        .iter()
        .zip(scores)
        .map(|(l, &s)| (s, l.label))
        .collect();
    let mut rng = Rng::new(1);
    let mut draws: Vec<f64> = (0..resamples)
        .map(|_| {
            let sample: Vec<(f64, f64)> = (0..pairs.len())
                .map(|_| pairs[(rng.next_u64() % pairs.len() as u64) as usize])
                .collect();
            spearman(&sample)
        })
        .collect();
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((q * resamples as f64) as usize).min(resamples - 1)];
    Agreement {
        measure: Measure::Spearman,
        value: spearman(&pairs),
        interval: (at(0.025), at(0.975)),
    }
}

/// Spearman's rank correlation of the pairs (ties get their mean rank).
pub fn spearman(pairs: &[(f64, f64)]) -> f64 {
    let ranks = |values: Vec<f64>| -> Vec<f64> {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut rank = vec![0.0; values.len()];
        let mut i = 0;
        while i < order.len() {
            let mut j = i;
            while j < order.len() && values[order[j]] == values[order[i]] {
                j += 1;
            }
            for &k in &order[i..j] {
                rank[k] = (i + j - 1) as f64 / 2.0;
            }
            i = j;
        }
        rank
    };
    let x = ranks(pairs.iter().map(|p| p.0).collect());
    let y = ranks(pairs.iter().map(|p| p.1).collect());
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let cov: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let vy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    if vx == 0.0 || vy == 0.0 {
        return 0.0;
    }
    cov / (vx * vy).sqrt()
}

/// The chance that a value of `harder` is above one of `easier` (ties
/// half), by ranks.
pub fn auc(easier: &[f64], harder: &[f64]) -> f64 {
    let mut pooled: Vec<(f64, bool)> = easier
        .iter()
        .map(|&v| (v, false))
        .chain(harder.iter().map(|&v| (v, true)))
        .collect();
    pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < pooled.len() {
        let mut j = i;
        while j < pooled.len() && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        let mid = (i + j + 1) as f64 / 2.0;
        rank_sum += mid * pooled[i..j].iter().filter(|p| p.1).count() as f64;
        i = j;
    }
    let (n1, n0) = (harder.len() as f64, easier.len() as f64);
    (rank_sum - n1 * (n1 + 1.0) / 2.0) / (n1 * n0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auc_counts_pairs_and_ties() {
        assert_eq!(auc(&[1.0, 2.0], &[3.0, 4.0]), 1.0);
        assert_eq!(auc(&[3.0, 4.0], &[1.0, 2.0]), 0.0);
        assert_eq!(auc(&[1.0], &[1.0]), 0.5);
        assert_eq!(auc(&[1.0, 3.0], &[2.0, 4.0]), 0.75);
    }

    #[test]
    fn spearman_ranks_and_values_fit_by_rank() {
        assert_eq!(spearman(&[(1.0, 10.0), (2.0, 20.0), (3.0, 25.0)]), 1.0);
        assert_eq!(spearman(&[(1.0, 3.0), (2.0, 2.0), (3.0, 1.0)]), -1.0);
        let base = pregen_games::GameKind::from_name("sokoban")
            .expect("sokoban")
            .default_model()
            .expect("a model");
        // Solve times that grow with the second term's value.
        let levels: Vec<Labelled> = (0..100)
            .map(|i| {
                let x = f64::from(i % 17);
                Labelled {
                    label: 3.0 * x + 1.0,
                    values: vec![f64::from(i % 5), x, 1.0],
                }
            })
            .collect();
        let fitted =
            calibrate(&base, &levels, Labels::Values, CalibrateConfig::default()).expect("a fit");
        assert_eq!(fitted.agreement.len(), 1);
        assert_eq!(fitted.agreement[0].measure, Measure::Spearman);
        assert!(fitted.agreement[0].value > 0.99, "{:?}", fitted.agreement);
    }

    #[test]
    fn a_fit_recovers_a_linear_rule_and_cross_validates() {
        let base = pregen_games::GameKind::from_name("sokoban")
            .expect("sokoban")
            .parse_model(
                "name = \"b\"\nversion = 1\ngame = \"sokoban\"\n\
                 [[terms]]\nfeature = \"pushes\"\nweight = 0.0\n\
                 [[terms]]\nfeature = \"boxes\"\nweight = 0.0\n",
            )
            .expect("a model");
        // The class is 0.5 x the first value, rounded; the second is noise
        // that is the same for every level (a constant term).
        let mut rng = Rng::new(9);
        let levels: Vec<Labelled> = (0..400)
            .map(|_| {
                let x = (rng.next_u64() % 6) as f64;
                Labelled {
                    label: (x / 2.0).floor(),
                    values: vec![x, 4.0],
                }
            })
            .collect();
        let fitted =
            calibrate(&base, &levels, Labels::Classes, CalibrateConfig::default()).expect("a fit");
        assert!(fitted.model.terms[0].weight > 0.3, "{:?}", fitted.model);
        assert!(
            fitted.model.terms[1].weight.abs() < 1e-6,
            "{:?}",
            fitted.model
        );
        assert_eq!(fitted.agreement.len(), 3);
        for a in &fitted.agreement {
            assert!(a.value > 0.99, "{a:?}");
            assert!(a.interval.0 <= a.value && a.value <= a.interval.1, "{a:?}");
        }
        // Deterministic: the same input, the same model and figures.
        let again =
            calibrate(&base, &levels, Labels::Classes, CalibrateConfig::default()).expect("a fit");
        assert_eq!(again.model, fitted.model);
        assert_eq!(again.agreement, fitted.agreement);
        assert!(
            calibrate(
                &base,
                &levels[..3],
                Labels::Classes,
                CalibrateConfig::default()
            )
            .is_err()
        );
    }
}
