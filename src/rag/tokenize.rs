//! Turning tool descriptions and user queries into index terms.
//!
//! Tool catalogs mix prose with identifiers (`get_current_weather`, `math.hypot`,
//! `fetchUserProfile`, `sha256sum`), and queries arrive in any language. The rules:
//!
//! - Words are runs of letters, digits and combining marks; ASCII punctuation, whitespace and
//!   the common Unicode punctuation blocks separate them. `_` and `.` are separators, so
//!   `math.hypot` and `get_current_weather` yield their parts.
//! - A word is split further at lower→upper case changes (`fetchUser` → fetch, user), before
//!   the last capital of an acronym followed by lower case (`HTTPServer` → http, server) and at
//!   letter↔digit changes (`sha256` → sha, 256). Parts are lowercased (full Unicode lowercase).
//! - Full-width ASCII (`Ｆｏｏ１`) is folded to ASCII first, as IMEs often produce it.
//! - Scripts written without spaces (Han, Kana, Hangul, Thai, Lao, Khmer, Myanmar) have no word
//!   boundaries we could find without a dictionary (a segmenter would bring a dictionary per
//!   language), so each run emits every unit (unigram) and every adjacent pair (bigram). A unit
//!   is a character together with the vowel signs and tone marks written on it (Thai `ต้`, not
//!   `ต` and `้`). A Chinese or Thai query then matches a description in that language on the
//!   shared characters, and pairs reward matching word order.
//! - Latin-script words, identifiers and numbers inside such a run (`使用mbox系统`, `LG ThinQ 에어컨`)
//!   are cut out as words of their own and go through the same rules as in English text, so an
//!   English or code-like term in a foreign-language request counts as much as in an English one.
//! - English parts of four letters or more go through a small suffix stripper (plural `s`/`es`/
//!   `ies`, `ed`, `ing`, final `e`) so `currencies` meets `currency` and `converting` meets
//!   `convert`. It is deliberately crude: queries and documents pass through the same function,
//!   so it only has to be consistent, not linguistically right.
//! - A short list of English function words (`the`, `of`, `to`...) is dropped.

/// The scripts whose runs become character unigrams + bigrams.
fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF      // Thai, Lao
        | 0x1000..=0x109F    // Myanmar
        | 0x1780..=0x17FF    // Khmer
        | 0x1100..=0x11FF    // Hangul Jamo
        | 0x3040..=0x30FF    // Hiragana, Katakana
        | 0x3130..=0x318F    // Hangul compatibility Jamo
        | 0x31F0..=0x31FF    // Katakana extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF66..=0xFF9F    // half-width Katakana
        | 0x20000..=0x323AF) // CJK extensions B..H
}

/// Characters that separate words. Everything non-ASCII that is not listed here is a word
/// character, which keeps combining marks (Devanagari vowel signs, accents) inside their word
/// without needing the Unicode category tables.
fn is_separator(c: char) -> bool {
    if c.is_ascii() {
        return !c.is_ascii_alphanumeric();
    }
    c.is_whitespace()
        || matches!(c as u32,
            0x00A0..=0x00BF      // Latin-1 punctuation and symbols
            | 0x00D7 | 0x00F7    // × ÷
            | 0x2000..=0x2BFF    // general punctuation, symbols, arrows, math, boxes, dingbats
            | 0x2E00..=0x2E7F    // supplemental punctuation
            | 0x3000..=0x303F    // CJK symbols and punctuation (、。「」…)
            | 0xFE10..=0xFE1F | 0xFE30..=0xFE6F // vertical and small forms
            | 0xFF00..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65 // full-width punctuation
            | 0x1F000..=0x1FAFF) // emoji and pictographs
}

/// Full-width ASCII letters and digits to their ASCII form.
fn fold_width(c: char) -> char {
    match c as u32 {
        0xFF10..=0xFF19 | 0xFF21..=0xFF3A | 0xFF41..=0xFF5A => {
            char::from_u32(c as u32 - 0xFEE0).unwrap_or(c)
        }
        _ => c,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Upper,
    Lower,
    Digit,
    Other,
}

fn kind(c: char) -> Kind {
    if c.is_ascii() {
        return match c {
            '0'..='9' => Kind::Digit,
            'A'..='Z' => Kind::Upper,
            'a'..='z' => Kind::Lower,
            _ => Kind::Other,
        };
    }
    if c.is_numeric() {
        Kind::Digit
    } else if c.is_uppercase() {
        Kind::Upper
    } else if c.is_lowercase() {
        Kind::Lower
    } else {
        Kind::Other // caseless letters, marks
    }
}

/// Appends the terms of `text` to `out`, in text order (duplicates kept: callers count them).
pub fn tokenize_into(text: &str, out: &mut Vec<String>) {
    let mut word: Vec<char> = Vec::new();
    let mut unspaced: Vec<char> = Vec::new();
    for raw in text.chars() {
        if raw.is_ascii() {
            // Most catalog text: no width folding or script lookup needed.
            if raw.is_ascii_alphanumeric() {
                flush_unspaced(&mut unspaced, out);
                word.push(raw);
            } else {
                flush_word(&mut word, out);
                flush_unspaced(&mut unspaced, out);
            }
            continue;
        }
        let c = fold_width(raw);
        if is_unspaced_script(c) {
            flush_word(&mut word, out);
            unspaced.push(c);
        } else if is_separator(c) {
            flush_word(&mut word, out);
            flush_unspaced(&mut unspaced, out);
        } else {
            flush_unspaced(&mut unspaced, out);
            word.push(c);
        }
    }
    flush_word(&mut word, out);
    flush_unspaced(&mut unspaced, out);
}

/// The terms of `text`.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokenize_into(text, &mut out);
    out
}

/// Vowel signs, tone marks and other combining marks of the unspaced scripts that are not
/// Han/Kana/Hangul (Thai, Lao, Myanmar, Khmer). They belong to the letter before them: a mark on
/// its own matches every syllable carrying it, which is noise, so it joins that letter's unit.
fn is_unspaced_mark(c: char) -> bool {
    matches!(c as u32,
        0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E             // Thai
        | 0x0EB1 | 0x0EB4..=0x0EBC | 0x0EC8..=0x0ECE           // Lao
        | 0x102B..=0x103E | 0x1056..=0x1059 | 0x105E..=0x1060  // Myanmar
        | 0x1062..=0x1064 | 0x1067..=0x106D | 0x1071..=0x1074
        | 0x1082..=0x108D | 0x108F | 0x109A..=0x109D
        | 0x17B4..=0x17D3 | 0x17DD) // Khmer
}

fn flush_unspaced(run: &mut Vec<char>, out: &mut Vec<String>) {
    if run.is_empty() {
        return;
    }
    // Units: a letter with the marks that follow it (a mark at the start stands alone).
    let mut units: Vec<String> = Vec::with_capacity(run.len());
    for &c in run.iter() {
        match units.last_mut() {
            Some(unit) if is_unspaced_mark(c) => unit.push(c),
            _ => units.push(c.to_lowercase().collect()),
        }
    }
    for (i, unit) in units.iter().enumerate() {
        out.push(unit.clone());
        if let Some(next) = units.get(i + 1) {
            let mut pair = String::with_capacity(unit.len() + next.len());
            pair.push_str(unit);
            pair.push_str(next);
            out.push(pair);
        }
    }
    run.clear();
}

fn flush_word(word: &mut Vec<char>, out: &mut Vec<String>) {
    if word.is_empty() {
        return;
    }
    let mut start = 0;
    let mut cur = kind(word[0]);
    let mut next = word.get(1).map(|&c| kind(c));
    for i in 1..word.len() {
        let prev = cur;
        cur = next.unwrap_or(Kind::Other);
        next = word.get(i + 1).map(|&c| kind(c));
        let boundary = match (prev, cur) {
            (Kind::Lower, Kind::Upper) | (Kind::Other, Kind::Upper) => true,
            // The last capital of an acronym starts the next part: HTTPServer -> HTTP | Server.
            (Kind::Upper, Kind::Upper) => next == Some(Kind::Lower),
            (Kind::Digit, k) | (k, Kind::Digit) => k != Kind::Digit,
            _ => false,
        };
        if boundary {
            emit_part(&word[start..i], out);
            start = i;
        }
    }
    emit_part(&word[start..], out);
    word.clear();
}

fn emit_part(part: &[char], out: &mut Vec<String>) {
    let mut s = String::with_capacity(part.len());
    for &c in part {
        if c.is_ascii() {
            s.push(c.to_ascii_lowercase());
        } else {
            s.extend(c.to_lowercase());
        }
    }
    // No stopword is longer than 6 bytes: most parts skip the lookup.
    if s.len() > 6 || STOPWORDS.binary_search(&s.as_str()).is_err() {
        out.push(stem(s));
    }
}

/// English function words (and contraction tails such as the `s` of `what's`), sorted. IDF
/// alone would make them cheap, but in a small catalog "the" still matches nearly every tool,
/// which hides a real zero-hit result (and with it the `on_empty` fallback) behind noise.
const STOPWORDS: &[&str] = &[
    "a", "about", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "d", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "ll", "m", "me", "my", "of", "on",
    "or", "our", "please", "re", "s", "she", "should", "so", "some", "t", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "to", "us", "ve", "was",
    "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would",
    "you", "your",
];

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// The light English suffix stripper described in the module docs. Only lowercase ASCII
/// words of four letters or more are touched. Works by truncating `word` in place.
pub fn stem(mut word: String) -> String {
    let w = word.as_bytes();
    if w.len() < 4 || !w.iter().all(u8::is_ascii_lowercase) {
        return word;
    }
    let ends = |n: usize, suffix: &str| word.as_bytes()[..n].ends_with(suffix.as_bytes());
    let mut n = w.len();
    // Plurals.
    if n >= 5 && ends(n, "ies") {
        word.truncate(n - 3);
        word.push('y');
        return word;
    }
    if ["sses", "xes", "zes", "ches", "shes"]
        .iter()
        .any(|e| ends(n, e))
    {
        n -= 2;
    } else if ends(n, "s") && !ends(n, "ss") && !ends(n, "us") && !ends(n, "is") {
        n -= 1;
    }
    // Verb endings, only when a vowel remains in the stem (so `red`, `bring`, `sing` stay).
    let mut cut = n;
    if n >= 6 && ends(n, "ing") {
        cut = n - 3;
    } else if n >= 5 && ends(n, "ied") {
        word.truncate(n - 3);
        word.push('y');
        return word;
    } else if n >= 5 && ends(n, "ed") {
        cut = n - 2;
    }
    let b = word.as_bytes();
    if cut != n && b[..cut].iter().any(|&c| is_vowel(c)) {
        // stopped -> stop, running -> run; but keep fill, pass, buzz.
        let doubled = cut >= 2
            && b[cut - 1] == b[cut - 2]
            && !is_vowel(b[cut - 1])
            && !matches!(b[cut - 1], b'l' | b's' | b'z');
        n = if doubled { cut - 1 } else { cut };
        if doubled {
            word.truncate(n);
            return word;
        }
    }
    // A final silent e: create/created/creating all meet at `creat`.
    if n >= 5 && ends(n, "e") && !ends(n, "ee") {
        n -= 1;
    }
    word.truncate(n);
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<String> {
        tokenize(s)
    }

    #[test]
    fn identifiers_split_on_separators_case_and_digits() {
        assert_eq!(t("get_current_weather"), ["get", "current", "weather"]);
        assert_eq!(t("math.hypot"), ["math", "hypot"]);
        assert_eq!(t("fetchUserProfile"), ["fetch", "user", "profil"]);
        assert_eq!(t("HTTPServer"), ["http", "server"]);
        assert_eq!(t("sha256sum"), ["sha", "256", "sum"]);
        assert_eq!(t("v2-API"), ["v", "2", "api"]);
    }

    #[test]
    fn unicode_lowercase_and_full_width() {
        assert_eq!(t("ÜBER Straße"), ["über", "straße"]);
        assert_eq!(t("Ｆｏｏ１"), ["foo", "1"]);
        // Combining marks stay inside their word (Devanagari vowel sign).
        assert_eq!(t("मौसम बताओ"), ["मौसम", "बताओ"]);
    }

    #[test]
    fn cjk_runs_become_unigrams_and_bigrams() {
        assert_eq!(
            t("查询天气"),
            ["查", "查询", "询", "询天", "天", "天气", "气"]
        );
        // Punctuation splits runs; Latin words inside stay words.
        assert_eq!(t("上海，weather好"), ["上", "上海", "海", "weather", "好"]);
        assert_eq!(t("날씨"), ["날", "날씨", "씨"]);
    }

    #[test]
    fn thai_marks_stay_on_their_letter_and_latin_words_inside_runs_are_whole() {
        // ต้อง = ต + ้ (tone mark) + อ + ง: three units, the mark never alone.
        assert_eq!(t("ต้อง"), ["ต้", "ต้อ", "อ", "อง", "ง"]);
        assert_eq!(t("รีด"), ["รี", "รีด", "ด"]);
        // Khmer and Myanmar vowel signs too.
        assert_eq!(t("កា"), ["កា"]);
        assert_eq!(t("မြန်"), ["မြ", "မြန်", "န်"]);
        // A code-like or English word inside Thai/CJK text is a word, split and stemmed as usual.
        let mixed = t("ขอรหัสservice_idหน่อย");
        let at = mixed.iter().position(|w| w == "servic").unwrap();
        assert_eq!(mixed[at - 1..at + 3], ["ส", "servic", "id", "ห"]);
        assert_eq!(
            t("使用getUserInfo接口"),
            ["使", "使用", "用", "get", "user", "info", "接", "接口", "口"]
        );
    }

    #[test]
    fn light_stemming_is_consistent() {
        for (a, b) in [
            ("currencies", "currency"),
            ("converting", "convert"),
            ("converted", "converts"),
            ("created", "create"),
            ("stopped", "stop"),
            ("matches", "match"),
            ("boxes", "box"),
            ("applied", "apply"),
        ] {
            assert_eq!(stem(a.into()), stem(b.into()), "{a} vs {b}");
        }
        for keep in ["bus", "analysis", "class", "red", "bring", "free", "tree"] {
            assert_eq!(stem(keep.into()), keep);
        }
        assert_eq!(stem("fill".into()), "fill");
        assert_eq!(stem("filling".into()), "fill");
    }

    #[test]
    fn stopwords_are_dropped_and_the_list_is_sorted() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOPWORDS.iter().all(|w| w.len() <= 6));
        assert_eq!(t("What's the weather in Paris?"), ["weather", "paris"]);
        assert_eq!(t("The"), Vec::<String>::new());
    }

    #[test]
    fn empty_and_punctuation_only() {
        assert!(t("").is_empty());
        assert!(t("  ,.;!? __ -- 。、").is_empty());
        assert!(t("🙂🙂").is_empty());
    }
}
