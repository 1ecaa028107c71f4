//! Calibration: a rating model's weights fitted to labelled levels.
//!
//! Levels come in ordinal classes (easiest first: say Boxoban's
//! `unfiltered`, `medium`, `hard`, or playtest success and failure). Each is
//! solved and its terms' values taken by a base model ([`Model::values`]);
//! the weights and bias are then fitted by ridge least squares of the class
//! index on those values, in closed form: standardized values, `w = (X'X +
//! λI)⁻¹ X'y` by Gaussian elimination, weights scaled back. So the fitted
//! difficulty reads on the scale of the classes (0 the easiest, 1 the
//! next...). Agreement is measured by k-fold cross-validation (a level's
//! fold is its index modulo k, in input order): for every pair of classes,
//! the AUC of the held-out ratings (the chance that a level of the harder
//! class rates above one of the easier; ties count half), with a 95%
//! bootstrap interval from 1,000 resamples drawn by the portable PRNG, seed 1.
//! The same input gives the same model and the same figures.

use pregen_games::rating::Model;
use pregen_games::rng::Rng;

/// One labelled level: its class and its terms' values.
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    /// The class index (0 the easiest).
    pub class: usize,
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

/// Agreement between a pair of classes.
#[derive(Debug, Clone, PartialEq)]
pub struct Agreement {
    /// The easier class's index.
    pub easier: usize,
    /// The harder class's index.
    pub harder: usize,
    /// The cross-validated AUC.
    pub auc: f64,
    /// Its 95% bootstrap interval.
    pub interval: (f64, f64),
}

/// A fitted model and how well it agrees with the labels.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The base model with fitted weights and bias.
    pub model: Model,
    /// Cross-validated agreement for every pair of classes.
    pub agreement: Vec<Agreement>,
    /// The same for the base model as it was (not fitted).
    pub base_agreement: Vec<Agreement>,
}

/// Fits `base`'s weights to `levels` (at least two classes with levels).
pub fn calibrate(
    base: &Model,
    levels: &[Labelled],
    config: CalibrateConfig,
) -> Result<Calibration, String> {
    let classes = levels.iter().map(|l| l.class + 1).max().unwrap_or(0);
    let present: Vec<usize> = (0..classes)
        .filter(|&c| levels.iter().any(|l| l.class == c))
        .collect();
    if present.len() < 2 {
        return Err("calibration needs levels of at least two classes".into());
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
    Ok(Calibration {
        model,
        agreement: agreement(levels, &held_out, &present, config.resamples),
        base_agreement: agreement(levels, &base_scores, &present, config.resamples),
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
    let y_mean = levels.iter().map(|l| l.class as f64).sum::<f64>() / n;
    // Normal equations on standardized values, centred target.
    let mut a = vec![vec![0.0; k + 1]; k];
    for l in levels {
        let z: Vec<f64> = (0..k)
            .map(|j| (l.values[j] - mean[j]) / spread[j])
            .collect();
        let y = l.class as f64 - y_mean;
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
            .filter(|(l, _)| l.class == c)
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
                easier,
                harder,
                auc: auc(&e, &h),
                interval: (at(0.025), at(0.975)),
            });
        }
    }
    out
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
                    class: (x / 2.0) as usize,
                    values: vec![x, 4.0],
                }
            })
            .collect();
        let fitted = calibrate(&base, &levels, CalibrateConfig::default()).expect("a fit");
        assert!(fitted.model.terms[0].weight > 0.3, "{:?}", fitted.model);
        assert!(
            fitted.model.terms[1].weight.abs() < 1e-6,
            "{:?}",
            fitted.model
        );
        assert_eq!(fitted.agreement.len(), 3);
        for a in &fitted.agreement {
            assert!(a.auc > 0.99, "{a:?}");
            assert!(a.interval.0 <= a.auc && a.auc <= a.interval.1, "{a:?}");
        }
        // Deterministic: the same input, the same model and figures.
        let again = calibrate(&base, &levels, CalibrateConfig::default()).expect("a fit");
        assert_eq!(again.model, fitted.model);
        assert_eq!(again.agreement, fitted.agreement);
        assert!(calibrate(&base, &levels[..3], CalibrateConfig::default()).is_err());
    }
}
