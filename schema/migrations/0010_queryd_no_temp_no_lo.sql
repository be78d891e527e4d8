-- queryd may read and nothing else. SELECT-only grants (0004) leave two ways
-- to write that every role has by default: temporary tables (TEMPORARY on
-- the database is granted to PUBLIC) and large objects (lo_create and its
-- kin are executable by PUBLIC). Both are taken from PUBLIC in the product
-- database; the role that runs the migrations keeps TEMPORARY, and a
-- superuser (ingestd's usual connection) is not bound by either.
--
-- Revoking from PUBLIC is the only way: a privilege PUBLIC holds cannot be
-- withheld from one role. Nothing of StrataKB uses large objects; River and
-- ingestd do not use temporary tables.
DO $$
BEGIN
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
    EXECUTE format('GRANT TEMPORARY ON DATABASE %I TO %I', current_database(), current_user);
END
$$;

REVOKE EXECUTE ON FUNCTION
    pg_catalog.lo_create(oid),
    pg_catalog.lo_creat(integer),
    pg_catalog.lo_from_bytea(oid, bytea),
    pg_catalog.lo_import(text),
    pg_catalog.lo_import(text, oid),
    pg_catalog.lo_open(oid, integer),
    pg_catalog.lowrite(integer, bytea),
    pg_catalog.lo_put(oid, bigint, bytea),
    pg_catalog.lo_truncate(integer, integer),
    pg_catalog.lo_truncate64(integer, bigint),
    pg_catalog.lo_unlink(oid)
FROM PUBLIC;
