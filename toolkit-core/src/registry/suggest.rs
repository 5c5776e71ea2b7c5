//! "Did you mean …?" for names the model or the host got wrong.

/// Names longer than this get no suggestions: no provider allows a tool
/// name past 64 characters, and comparing a name of any length with every
/// tool would let one call cost seconds.
pub(crate) const MAX_COMPARED: usize = 128;

/// The candidates closest to `wanted`, best first: at most three, each within
/// an edit distance (optimal string alignment: a swap of two neighbours is
/// one edit) of a third of the longer name (at least 2), or sharing it as a
/// prefix or a substring. None for a name longer than
/// [`MAX_COMPARED`] characters.
pub(crate) fn closest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    if !is_comparable(wanted) {
        return Vec::new();
    }
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter(|candidate| is_comparable(candidate))
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let distance = strsim::osa_distance(&wanted_lower, &lower);
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

fn is_comparable(name: &str) -> bool {
    // The byte length bounds the character count from above: most names
    // are decided without counting.
    name.len() <= MAX_COMPARED || name.chars().nth(MAX_COMPARED).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names() {
        let names = ["search", "screenshot", "scroll", "navigate", "go_back"];
        assert_eq!(closest("serach", names), ["search"]);
        assert_eq!(closest("Navigate", names), ["navigate"]);
        assert_eq!(closest("back", names), ["go_back"]);
        assert!(closest("xyzzy", names).is_empty());
    }

    #[test]
    fn long_names_are_not_compared() {
        let names = ["search"];
        let long = format!("search{}", "x".repeat(MAX_COMPARED));
        assert!(closest(&long, names).is_empty());
        assert_eq!(closest(&"é".repeat(60), ["é".repeat(61).as_str()]).len(), 1);
    }
}
