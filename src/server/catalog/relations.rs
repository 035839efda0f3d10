//! Relations the caller names (`regclass` arguments). pgrx's own `PgRelation` argument opens
//! the relation before our code runs, and an OID that names nothing (`bench_pages(0)`) then
//! fails as an internal error; this type keeps the OID, and [`RegClass::open`] reports a
//! missing relation as `undefined_table` (42P01).

use pgrx::callconv::{Arg, ArgAbi};
use pgrx::nullable::Nullable;
use pgrx::pgrx_sql_entity_graph::metadata::{
    ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable, TypeOrigin,
};
use pgrx::prelude::*;
use pgrx::{FromDatum, IntoDatum, PgRelation, PgSqlErrorCode};

use super::spi::spi_failed;
use crate::errors::report;

/// A `regclass` argument: an OID, not yet opened.
#[derive(Debug, Clone, Copy)]
pub struct RegClass(pg_sys::Oid);

impl RegClass {
    /// The OID, as given (the relation may not exist).
    pub fn oid(self) -> pg_sys::Oid {
        self.0
    }

    /// Open the relation with AccessShareLock, held to the end of the transaction.
    pub fn open(self) -> PgRelation {
        // SAFETY: try_relation_open returns NULL for a missing relation instead of raising;
        // a non-NULL relation is open and locked, and from_pg_owned closes it on drop.
        unsafe {
            let rel = pg_sys::try_relation_open(self.0, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            if rel.is_null() {
                report(
                    PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE,
                    format!("relation with OID {} does not exist", self.0.to_u32()),
                    None,
                );
            }
            PgRelation::from_pg_owned(rel)
        }
    }
}

impl FromDatum for RegClass {
    unsafe fn from_polymorphic_datum(datum: pg_sys::Datum, is_null: bool, _typoid: pg_sys::Oid) -> Option<RegClass> {
        // SAFETY: a regclass datum is an OID, which is what Oid::from_datum reads.
        (!is_null).then(|| unsafe { pg_sys::Oid::from_datum(datum, false) }).flatten().map(RegClass)
    }
}

impl IntoDatum for RegClass {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        Some(pg_sys::Datum::from(self.0))
    }
    fn type_oid() -> pg_sys::Oid {
        pg_sys::REGCLASSOID
    }
}

// SAFETY: the argument is unboxed through FromDatum above, as pgrx unboxes its own PgRelation.
unsafe impl<'fcx> ArgAbi<'fcx> for RegClass {
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
        let index = arg.index();
        // SAFETY: the datum is this function's regclass argument.
        unsafe { arg.unbox_arg_using_from_datum() }.unwrap_or_else(|| panic!("argument {index} must not be null"))
    }

    unsafe fn unbox_nullable_arg(arg: Arg<'_, 'fcx>) -> Nullable<Self> {
        // SAFETY: as above.
        unsafe { arg.unbox_arg_using_from_datum() }.into()
    }
}

// SAFETY: the SQL type named is regclass, whose datum is the OID this type reads and writes.
unsafe impl SqlTranslatable for RegClass {
    const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!(RegClass);
    const TYPE_ORIGIN: TypeOrigin = TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("regclass"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> = Ok(ReturnsRef::One(SqlMappingRef::literal("regclass")));
}

/// Every relation of this database that has storage and writes WAL.
pub fn permanent_relations() -> Vec<pg_sys::Oid> {
    Spi::connect(|client| {
        client
            .select(
                "SELECT oid FROM pg_catalog.pg_class \
                 WHERE relkind OPERATOR(pg_catalog.=) ANY ('{r,i,t,m,S}'::pg_catalog.\"char\"[]) \
                   AND relpersistence OPERATOR(pg_catalog.=) 'p'::pg_catalog.\"char\" \
                 ORDER BY oid",
                None,
                &[],
            )
            .unwrap_or_else(|e| spi_failed(e))
            .filter_map(|row| row.get::<pg_sys::Oid>(1).ok().flatten())
            .collect()
    })
}
