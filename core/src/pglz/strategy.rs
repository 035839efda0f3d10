//! The six knobs of a pglz compression run ([`Strategy`]) and their textual form.

use std::fmt;

use crate::error::{CodecError, Result};

/// Parameters steering `pglz_compress`, field for field PostgreSQL's `PGLZ_Strategy`.
///
/// Values are stored exactly as given; the compressor clamps them at run time
/// (`match_size_good` to 17..=273, `match_size_drop` to 0..=100, `min_comp_rate`
/// to 0..=99) just as PostgreSQL does, so that any `PGLZ_Strategy` a C caller
/// could build behaves identically here.
/// `#[repr(C)]`: the same layout as PostgreSQL's `PGLZ_Strategy` (six `int32` in this order), so
/// a `&Strategy` can be handed to the C `pglz_compress` as it is.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strategy {
    /// Inputs shorter than this are not compressed.
    pub min_input_size: i32,
    /// Inputs longer than this are not compressed.
    pub max_input_size: i32,
    /// Minimum saving, in percent of the input size, for the result to be accepted.
    pub min_comp_rate: i32,
    /// Give up once this many output bytes were written without finding any match.
    pub first_success_by: i32,
    /// Stop searching the history as soon as a match at least this long is found.
    pub match_size_good: i32,
    /// Percentage by which the "good" length shrinks per history entry visited.
    pub match_size_drop: i32,
}

/// Field names in declaration order; used by the parser, `Display` and error messages.
const FIELD_NAMES: [&str; 6] =
    ["min_input_size", "max_input_size", "min_comp_rate", "first_success_by", "match_size_good", "match_size_drop"];

impl Strategy {
    /// PostgreSQL's `PGLZ_strategy_default`, used for TOAST.
    pub const DEFAULT: Strategy = Strategy {
        min_input_size: 32,
        max_input_size: i32::MAX,
        min_comp_rate: 25,
        first_success_by: 1024,
        match_size_good: 128,
        match_size_drop: 10,
    };

    /// PostgreSQL's `PGLZ_strategy_always`: any size, any saving of at least one byte.
    pub const ALWAYS: Strategy = Strategy {
        min_input_size: 0,
        max_input_size: i32::MAX,
        min_comp_rate: 0,
        first_success_by: i32::MAX,
        match_size_good: 128,
        match_size_drop: 6,
    };

    fn fields(&self) -> [i32; 6] {
        [
            self.min_input_size,
            self.max_input_size,
            self.min_comp_rate,
            self.first_success_by,
            self.match_size_good,
            self.match_size_drop,
        ]
    }

    fn field_mut(&mut self, index: usize) -> &mut i32 {
        match index {
            0 => &mut self.min_input_size,
            1 => &mut self.max_input_size,
            2 => &mut self.min_comp_rate,
            3 => &mut self.first_success_by,
            4 => &mut self.match_size_good,
            _ => &mut self.match_size_drop,
        }
    }

    /// Parses a strategy from text.
    ///
    /// Accepted forms (surrounding whitespace and letter case are ignored):
    /// * `default` or `always`, the two built-in strategies;
    /// * a comma-separated list of `key=value` pairs using the six field names,
    ///   e.g. `min_comp_rate=10, first_success_by=4096`. Fields not mentioned keep
    ///   the value of [`Strategy::DEFAULT`]. Values are 32-bit signed integers.
    ///
    /// Unknown or repeated keys, missing `=`, and values that are not integers are
    /// rejected with [`CodecError::InvalidParameter`].
    pub fn parse(text: &str) -> Result<Strategy> {
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("default") {
            return Ok(Strategy::DEFAULT);
        }
        if trimmed.eq_ignore_ascii_case("always") {
            return Ok(Strategy::ALWAYS);
        }
        if trimmed.is_empty() {
            return Err(CodecError::invalid(format!(
                "pglz strategy is empty; use \"default\", \"always\" or a comma-separated \
                 list of key=value pairs with keys {}",
                valid_names()
            )));
        }

        if !trimmed.contains('=') && !trimmed.contains(',') {
            return Err(CodecError::invalid(format!(
                "unknown pglz strategy \"{trimmed}\"; use \"default\", \"always\" or a \
                 comma-separated list of key=value pairs with keys {}",
                valid_names()
            )));
        }

        let mut strategy = Strategy::DEFAULT;
        let mut seen = [false; 6];
        for item in trimmed.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(CodecError::invalid(format!(
                    "pglz strategy \"{trimmed}\" contains an empty item; expected \
                     key=value pairs separated by commas, keys: {}",
                    valid_names()
                )));
            }
            let Some((key, value)) = item.split_once('=') else {
                return Err(CodecError::invalid(format!(
                    "pglz strategy item \"{item}\" is not of the form key=value; \
                     use \"default\", \"always\" or key=value pairs with keys {}",
                    valid_names()
                )));
            };
            let key = key.trim();
            let value = value.trim();
            let Some(index) = FIELD_NAMES.iter().position(|name| name.eq_ignore_ascii_case(key)) else {
                return Err(CodecError::invalid(format!(
                    "unknown pglz strategy parameter \"{key}\"; valid parameters are {}",
                    valid_names()
                )));
            };
            if seen[index] {
                return Err(CodecError::invalid(format!(
                    "pglz strategy parameter \"{}\" is given more than once",
                    FIELD_NAMES[index]
                )));
            }
            seen[index] = true;
            let parsed: i32 = value.parse().map_err(|_| {
                CodecError::invalid(format!(
                    "invalid value \"{value}\" for pglz strategy parameter \"{}\": \
                     expected an integer between {} and {}",
                    FIELD_NAMES[index],
                    i32::MIN,
                    i32::MAX
                ))
            })?;
            *strategy.field_mut(index) = parsed;
        }
        Ok(strategy)
    }
}

fn valid_names() -> String {
    FIELD_NAMES.join(", ")
}

impl Default for Strategy {
    fn default() -> Self {
        Strategy::DEFAULT
    }
}

impl fmt::Display for Strategy {
    /// Prints all six fields as `key=value` pairs, a form [`Strategy::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, value)) in FIELD_NAMES.iter().zip(self.fields()).enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{name}={value}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Strategy {
    type Err = CodecError;

    fn from_str(s: &str) -> Result<Self> {
        Strategy::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_round_trips() {
        for s in [Strategy::DEFAULT, Strategy::ALWAYS] {
            assert_eq!(Strategy::parse(&s.to_string()).unwrap(), s);
        }
        assert_eq!(
            Strategy::DEFAULT.to_string(),
            "min_input_size=32,max_input_size=2147483647,min_comp_rate=25,\
             first_success_by=1024,match_size_good=128,match_size_drop=10"
        );
    }

    #[test]
    fn negative_values_are_kept() {
        let s = Strategy::parse("match_size_drop=-5").unwrap();
        assert_eq!(s.match_size_drop, -5);
    }
}
