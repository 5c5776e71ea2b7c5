//! "Did you mean …?" for names the model or the host got wrong.

/// The candidates closest to `wanted`, best first: at most three, each within
/// an edit distance of a third of the longer name (at least 2), or sharing
/// it as a prefix or a substring.
pub(crate) fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let distance = edit_distance(&wanted_lower, &lower);
            let limit = (wanted.len().max(candidate.len()) / 3).max(2);
            let related = lower.contains(&wanted_lower) || wanted_lower.contains(&lower);
            (distance <= limit || related).then_some((distance, candidate))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, name)| name.to_owned())
        .collect()
}

/// Levenshtein distance, with a swap of two neighbours counted as one edit.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("search", "search"), 0);
        assert_eq!(edit_distance("serach", "search"), 1);
        assert_eq!(edit_distance("seach", "search"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn closest_names() {
        let names = ["search", "screenshot", "scroll", "navigate", "go_back"];
        assert_eq!(closest("serach", names), ["search"]);
        assert_eq!(closest("Navigate", names), ["navigate"]);
        assert_eq!(closest("back", names), ["go_back"]);
        assert!(closest("xyzzy", names).is_empty());
    }
}
