//! SQL text that compresslab prints for a DBA to run (the advisor's `apply_sql`, the report's
//! "To apply" block): names and literals written so that a statement is always one line.
//!
//! A role may name a table or column anything, newlines included. The advice is pasted line by
//! line (`psql -c "$line"`), so a raw newline in a quoted name would end one statement and start
//! another the role wrote, run by whoever applies the advice (`ALTER ROLE ... SUPERUSER`, or
//! `\! cmd` for the shell). Every character that may end or split a line is therefore escaped:
//! in an identifier as a Unicode escape (`U&"t\000aALTER"`, which the server's parser turns back
//! into the same name), in a string literal as an escape string (`E'\n'`, since `U&` strings
//! depend on `standard_conforming_strings`). The server quotes ordinary names itself
//! (`quote_identifier`, which knows its keywords); only names with such characters take this
//! module's form.

/// Whether `c` may end, split or hide a line: ASCII and C1 control characters (newline,
/// carriage return, tab, escape, DEL, NEL and the rest) and the Unicode line and paragraph
/// separators.
pub fn breaks_lines(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Whether `s` holds a character of [`breaks_lines`].
pub fn has_line_breaks(s: &str) -> bool {
    s.chars().any(breaks_lines)
}

/// `name` as an always-quoted Unicode-escape identifier, `U&"..."`: `"` doubled, `\` (the
/// escape character) doubled, every character of [`breaks_lines`] as `\XXXX`. Any name reads
/// back as itself; the result holds no such character.
pub fn unicode_identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 5);
    out.push_str("U&\"");
    for c in name.chars() {
        match c {
            '"' => out.push_str("\"\""),
            '\\' => out.push_str("\\\\"),
            // Control characters are all in the Basic Multilingual Plane: four digits suffice.
            c if breaks_lines(c) => out.push_str(&format!("\\{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `s` as an SQL string literal: `'...'` with `'` doubled when it holds no character of
/// [`breaks_lines`] nor a backslash, else an escape string `E'...'` (`\\`, `\'`, `\n`, `\r`,
/// `\t`, other such characters as `\uXXXX`), which reads the same whatever
/// `standard_conforming_strings` is.
pub fn string_literal(s: &str) -> String {
    if !has_line_breaks(s) && !s.contains('\\') {
        return format!("'{}'", s.replace('\'', "''"));
    }
    let mut out = String::with_capacity(s.len() + 4);
    out.push_str("E'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if breaks_lines(c) => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The server's reading of a `U&"..."` identifier (default escape character), for the tests.
    fn read_unicode_identifier(quoted: &str) -> String {
        let body = quoted.strip_prefix("U&\"").and_then(|q| q.strip_suffix('"')).expect("U&\"...\"");
        let (mut out, mut chars) = (String::new(), body.chars());
        while let Some(c) = chars.next() {
            match c {
                '"' => assert_eq!(chars.next(), Some('"'), "a lone quote ends the identifier"),
                '\\' => match chars.clone().next() {
                    Some('\\') => {
                        chars.next();
                    }
                    _ => {
                        let hex: String = chars.by_ref().take(4).collect();
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap());
                        continue;
                    }
                },
                _ => {}
            }
            out.push(c);
        }
        out
    }

    #[test]
    fn hostile_names() {
        let name = "t\nALTER ROLE r SUPERUSER; --";
        assert_eq!(unicode_identifier(name), "U&\"t\\000AALTER ROLE r SUPERUSER; --\"");
        assert_eq!(unicode_identifier("a\"b\\c\r\u{2028}é"), "U&\"a\"\"b\\\\c\\000D\\2028é\"");
        assert_eq!(string_literal("public.t"), "'public.t'");
        assert_eq!(string_literal("o'k"), "'o''k'");
        assert_eq!(string_literal("a\n\\! id\u{85}'"), "E'a\\n\\\\! id\\u0085\\''");
        assert!(breaks_lines('\u{7f}') && breaks_lines('\u{85}') && breaks_lines('\u{2029}') && !breaks_lines('é'));
    }

    proptest! {
        #[test]
        fn identifiers_are_one_line_and_read_back(name in "[a-z\"\\\\;$\\-\n\r\t\u{0}-\u{1f}\u{7f}\u{85}\u{2028}\u{2029}é😀 ]{0,24}") {
            let quoted = unicode_identifier(&name);
            prop_assert!(!has_line_breaks(&quoted));
            prop_assert_eq!(read_unicode_identifier(&quoted), name);
        }

        #[test]
        fn literals_are_one_line(s in "[a-z'\\\\\n\r\t\u{0}-\u{1f}\u{85}\u{2028} ]{0,24}") {
            prop_assert!(!has_line_breaks(&string_literal(&s)));
        }
    }
}
