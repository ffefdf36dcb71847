//! The size of what a conditions review answers: the caller chooses how many conditions and
//! union members it sends back, so the reasons and errors listed for them are capped, with the
//! count of those left out.

/// How many items an answer lists at most.
pub const MAX_LISTED: usize = 16;

/// The first [`MAX_LISTED`] of `items` joined by `separator`, then how many more there were.
pub fn join(items: &[String], separator: &str) -> String {
    let mut text = items
        .iter()
        .take(MAX_LISTED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(separator);
    if items.len() > MAX_LISTED {
        text.push_str(&format!("{separator}and {} more", items.len() - MAX_LISTED));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{MAX_LISTED, join};

    #[test]
    fn long_lists_are_cut_with_a_count_of_the_rest() {
        let few: Vec<String> = (0..3).map(|i| i.to_string()).collect();
        assert_eq!(join(&few, ", "), "0, 1, 2");
        let many: Vec<String> = (0..25_000).map(|i| format!("id-{i}")).collect();
        let text = join(&many, ", ");
        assert!(
            text.ends_with(&format!(", and {} more", 25_000 - MAX_LISTED)),
            "{text}"
        );
        assert!(text.len() < 400, "{}", text.len());
    }
}
