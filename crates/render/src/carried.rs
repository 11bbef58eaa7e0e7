//! Whether a page's static response carries the text its render showed ([`static_carries`]):
//! a script that writes its page from data embedded in the HTML (`<script
//! type="application/json">`) leaves the page's words in the response, one that asks for its
//! data by a request of its own (`fetch('/api/page/3.json')`, the usual single-page
//! application) leaves a shell every page shares. On such a page a cheap check of the static
//! response (its length, a `Range` sample) tells nothing of the text: two pages of different
//! text have the same shell.

use memchr::memmem;

/// Words of the shown text looked for in the static response, at most.
const WORDS: usize = 16;

/// Characters a word must have to be looked for (shorter ones are found anywhere).
const MIN_WORD: usize = 4;

/// Whether the static response `html` carries the text its render showed (`shown`): at least
/// three quarters of up to [`WORDS`] words of `shown` (of [`MIN_WORD`] characters or more,
/// spread over it) are found in it, as they are. A text with no such word carries nothing to
/// tell: true.
pub fn static_carries(html: &[u8], shown: &str) -> bool {
    let words: Vec<&str> = shown
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= MIN_WORD)
        .collect();
    if words.is_empty() {
        return true;
    }
    let step = words.len().div_ceil(WORDS);
    let asked: Vec<&str> = words.iter().step_by(step).copied().collect();
    let found = (asked.iter())
        .filter(|w| memmem::find(html, w.as_bytes()).is_some())
        .count();
    found * 4 >= asked.len() * 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_static_response_carries_the_text_its_data_holds_not_a_shell_s() {
        let text = "Every chapter of this handbook explains how packages are built, \
                    signed and uploaded; the archive keeps them for years.";
        let embedded = format!(
            "<div id=\"root\">Loading...</div><script type=\"application/json\">{}</script>",
            serde_json_like(text)
        );
        let shell = "<div id=\"root\">Loading...</div><script src=\"/app.js\"></script>";
        let cases: [(&str, &str, &str, bool); 5] = [
            ("the text in the page's data", &embedded, text, true),
            ("a shell whose script asks for the text", shell, text, false),
            ("the text in the page itself", text, text, true),
            ("no word long enough to tell", shell, "a to b", true),
            (
                "a quarter of the words only",
                "chapter handbook",
                text,
                false,
            ),
        ];
        for (what, html, shown, carries) in cases {
            assert_eq!(static_carries(html.as_bytes(), shown), carries, "{what}");
        }
    }

    /// `text` as a JSON string's content (quotes escaped), as a page's data holds it.
    fn serde_json_like(text: &str) -> String {
        format!("{{\"text\": \"{}\"}}", text.replace('"', "\\\""))
    }
}
