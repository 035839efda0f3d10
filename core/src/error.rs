//! The one error type of the core. Each variant maps to one SQLSTATE in the extension.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodecError {
    /// Compressed input is malformed (SQLSTATE `data_corrupted`, XX001).
    Corrupt(String),
    /// An unknown method, level, strategy or option (SQLSTATE `invalid_parameter_value`, 22023).
    InvalidParameter(String),
    /// A size above a configured or hard limit (SQLSTATE `program_limit_exceeded`, 54000).
    TooLarge(String),
}

impl CodecError {
    pub fn corrupt(msg: impl Into<String>) -> Self {
        CodecError::Corrupt(msg.into())
    }
    pub fn invalid(msg: impl Into<String>) -> Self {
        CodecError::InvalidParameter(msg.into())
    }
    pub fn too_large(msg: impl Into<String>) -> Self {
        CodecError::TooLarge(msg.into())
    }
    pub fn message(&self) -> &str {
        match self {
            CodecError::Corrupt(m) | CodecError::InvalidParameter(m) | CodecError::TooLarge(m) => m,
        }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for CodecError {}

pub type Result<T> = std::result::Result<T, CodecError>;
