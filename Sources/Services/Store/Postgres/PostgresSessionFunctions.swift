/// The functions through which a host runs the statements of every write: an add, each read of
/// the change log, and the procedure that does an add and the read after it in one call.
///
/// PostgresNIO sends each query as an unnamed statement, which the server plans again on every
/// call, and planning these statements costs the server more than running them. A PL/pgSQL
/// function plans its statements once per connection and keeps the plans; `plan_cache_mode =
/// force_generic_plan` keeps it from planning them again for each argument (the log read's plan,
/// an index range scan on `crescent_changes_by_xid`, does not depend on them).
///
/// Each connection creates them in its own temporary schema (`pg_temp`), so they go with the
/// connection, always match the SQL of the crescent that calls them, and leave the database's
/// schema (and its version) alone. Creating them needs the `TEMPORARY` privilege on the database,
/// which PostgreSQL grants to every user unless revoked.
enum PostgresSessionFunctions {
    /// The statements that create the functions, run once per connection.
    static let definitions = [add, readLog, addThenRead]

    /// The call of ``addThenRead`` that each connection prepares once (a named statement, parsed
    /// and analysed once): the collection, the records' JSON texts, the cursor (a snapshot's text) and the names of
    /// the collections the host follows.
    static let addThenReadCall = "CALL pg_temp.crescent_add_then_read($1, $2, $3, $4)"

    /// `pg_temp.crescent_add(collection, records)`: inserts the records (JSON texts, in order) and
    /// their change-log rows; returns each new id and the transaction's id, in id order.
    static let add = """
        CREATE FUNCTION pg_temp.crescent_add(p_collection text, p_records text[])
        RETURNS TABLE (added_id bigint, added_xid bigint) LANGUAGE plpgsql
        SET plan_cache_mode = force_generic_plan AS $$
        BEGIN
            RETURN QUERY WITH added AS (
                INSERT INTO crescent_records (collection, data)
                SELECT p_collection, record FROM unnest(p_records::jsonb[]) WITH ORDINALITY AS given(record, position)
                ORDER BY position
                RETURNING id, version, data
            ), logged AS (
                INSERT INTO crescent_changes (collection, kind, record_id, version, data)
                SELECT p_collection, 'i', id, version, data FROM added ORDER BY id
            )
            SELECT id, pg_current_xact_id()::text::bigint FROM added ORDER BY id;
        END $$
        """

    /// `pg_temp.crescent_read_log(from, collections, xid)`: the change-log rows of `collections`
    /// that the statement's snapshot sees and the snapshot `from` (text, the host's cursor) did
    /// not: those of transactions from its `xmax` on and of those it saw in progress. Rows of a
    /// transaction still open are not visible yet, so an open transaction holds back only its
    /// own rows, and the range scan on `crescent_changes_by_xid` starts at `from`'s `xmax`, not
    /// at the oldest transaction open in the cluster. Ordered by transaction id and then log
    /// order, each beside the statement's snapshot (`seen`, the next cursor), the compaction
    /// horizon and `pg_xact_status` of `xid` (null for none); one row of those three with null
    /// changes when the log holds none.
    static let readLog = """
        CREATE FUNCTION pg_temp.crescent_read_log(p_from text, p_names text[], p_xid bigint)
        RETURNS TABLE (seen text, compacted bigint, status text, xid bigint, collection text,
                       kind text, record_id bigint, version bigint, data text) LANGUAGE plpgsql
        SET plan_cache_mode = force_generic_plan AS $$
        #variable_conflict use_column
        DECLARE
            v_after bigint := pg_snapshot_xmax(p_from::pg_snapshot)::text::bigint;
            v_open bigint[] := ARRAY(SELECT o::text::bigint FROM pg_snapshot_xip(p_from::pg_snapshot) o);
        BEGIN
            RETURN QUERY SELECT h.seen, h.compacted, h.status, c.xid, c.collection, c.kind, c.record_id, c.version, c.data
            FROM (SELECT pg_current_snapshot()::text AS seen,
                         COALESCE((SELECT m.value FROM crescent_meta m WHERE m.key = 'compacted_below'), 0) AS compacted,
                         pg_xact_status(p_xid::text::xid8) AS status) h
            LEFT JOIN LATERAL (
                SELECT l.xid, l.seq, l.collection, l.kind, l.record_id, l.version, l.data::text AS data
                FROM crescent_changes l
                WHERE (l.xid >= v_after OR l.xid = ANY(v_open)) AND l.collection = ANY(p_names)
            ) c ON true
            ORDER BY c.xid, c.seq;
        END $$
        """

    /// `pg_temp.crescent_add_then_read(collection, records, from, names)`: an add
    /// (``add``), its COMMIT, then a read of the log from `from` (``readLog``) in a new snapshot,
    /// all in one round trip. A procedure, not a function, so that it can commit: the read after
    /// the commit finds the add's rows, which confirms the commit in the same call. It answers one
    /// row: the new ids and the add's transaction, then the read's snapshot (`seen`) and the compaction horizon, and the
    /// log rows read as parallel arrays in log order (`data` is empty for a removal). The arrays
    /// are built by a loop over the read, in its order, rather than by `array_agg(... ORDER BY)`,
    /// which sorts once per column. The procedure has no SET clause, which would forbid its
    /// COMMIT; the functions it calls keep theirs.
    static let addThenRead = """
        CREATE PROCEDURE pg_temp.crescent_add_then_read(p_collection text, p_records text[], p_from text, p_names text[],
            INOUT added_ids bigint[] DEFAULT NULL, INOUT added_xid bigint DEFAULT NULL,
            INOUT seen text DEFAULT NULL, INOUT compacted bigint DEFAULT NULL,
            INOUT xids bigint[] DEFAULT '{}', INOUT collections text[] DEFAULT '{}', INOUT kinds text[] DEFAULT '{}',
            INOUT record_ids bigint[] DEFAULT '{}', INOUT versions bigint[] DEFAULT '{}', INOUT data text[] DEFAULT '{}')
        LANGUAGE plpgsql AS $$
        DECLARE
            r record;
        BEGIN
            SELECT array_agg(a.added_id ORDER BY a.added_id), max(a.added_xid) INTO added_ids, added_xid
            FROM pg_temp.crescent_add(p_collection, p_records) a;
            COMMIT;
            FOR r IN SELECT * FROM pg_temp.crescent_read_log(p_from, p_names, NULL) LOOP
                seen := r.seen;
                compacted := r.compacted;
                CONTINUE WHEN r.xid IS NULL;
                xids := xids || r.xid;
                collections := collections || r.collection;
                kinds := kinds || r.kind;
                record_ids := record_ids || r.record_id;
                versions := versions || r.version;
                data := data || COALESCE(r.data, '');
            END LOOP;
        END $$
        """
}
