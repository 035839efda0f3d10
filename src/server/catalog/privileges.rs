//! Who may see which figure. Compressed sizes leak how alike bytes are, so every figure is
//! computed only from data the caller could read anyway: a relation's pages need what reading
//! its rows needs, server files and WAL need superuser or `pg_read_server_files`, and
//! database-wide estimates need superuser, like `wal_compression` itself.

use pgrx::{pg_sys, PgRelation, PgSqlErrorCode};

use crate::errors::report;

pub fn permission_denied(message: String, hint: &str) -> ! {
    report(PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE, message, Some(hint))
}

fn user_has_role(role: u32) -> bool {
    // SAFETY: a catalog lookup on the current user; both are valid OIDs.
    unsafe { pg_sys::has_privs_of_role(pg_sys::GetUserId(), pg_sys::Oid::from(role)) }
}

fn is_superuser() -> bool {
    // SAFETY: a catalog lookup on the current user.
    unsafe { pg_sys::superuser() }
}

/// Reading a relation's pages needs what reading its rows needs: SELECT on the table (or
/// pg_read_all_data), and no row-level security hiding rows from this user — page images
/// contain every row, and their compressed size leaks how alike rows are.
pub fn require_page_read(rel: &PgRelation) {
    // SAFETY: a catalog lookup on a relation we hold a lock on and the current user.
    let may_select =
        unsafe { pg_sys::pg_class_aclcheck(rel.oid(), pg_sys::GetUserId(), pg_sys::ACL_SELECT as pg_sys::AclMode) }
            == pg_sys::AclResult::ACLCHECK_OK
            || user_has_role(pg_sys::ROLE_PG_READ_ALL_DATA);
    if !may_select {
        permission_denied(
            format!("permission denied for table {}", rel.name()),
            "Benchmarking a relation's pages needs SELECT on it, or membership in pg_read_all_data.",
        );
    }
    // SAFETY: as above; check_enable_rls only reads the catalog and the current user.
    let rls = unsafe { pg_sys::check_enable_rls(rel.oid(), pg_sys::InvalidOid, false) };
    if !is_superuser() && rls == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32 {
        permission_denied(
            format!("table {} has row-level security enabled for this user", rel.name()),
            "Page images contain rows the policies hide; only a superuser may benchmark its pages.",
        );
    }
}

pub fn may_read_server_files() -> bool {
    is_superuser() || user_has_role(pg_sys::ROLE_PG_READ_SERVER_FILES)
}

/// Server files and WAL: superuser or pg_read_server_files, as for pg_read_binary_file().
pub fn require_server_file_read(path: &str) {
    if !may_read_server_files() {
        permission_denied(
            format!("permission denied to read server file \"{path}\""),
            "Only superusers and members of pg_read_server_files may benchmark server files and WAL.",
        );
    }
}

/// WAL holds every row of every table: superuser or pg_read_server_files, PostgreSQL 16's
/// rule for pg_walinspect.
pub fn require_wal_read(what: &str) {
    if !may_read_server_files() {
        permission_denied(
            format!("permission denied to {what}"),
            "WAL holds every row of every table: only superusers and members of pg_read_server_files may read it.",
        );
    }
}

/// Figures over the whole database: superuser only.
pub fn require_superuser(what: &str, hint: &str) {
    if !is_superuser() {
        permission_denied(format!("permission denied to {what}"), hint);
    }
}
