-- cordon's shared store: two database roles, so that a machine is not an approver.
--
-- Run as a superuser (or the tables' owner holding CREATEROLE), in the store's database,
-- after cordon has created the schema (open the store once as its owner), and again
-- after an upgrade of cordon that adds tables; it is idempotent:
--
--   psql -v ON_ERROR_STOP=1 -d cordon -f pg_roles.sql
--
-- Then give each machine a login role in `cordon_machine` and each human approver (the
-- console's or `cordon approvals`' machine) one in `cordon_approver`:
--
--   CREATE ROLE ci_runner_7 LOGIN PASSWORD '…' IN ROLE cordon_machine;
--   CREATE ROLE alice LOGIN PASSWORD '…' IN ROLE cordon_approver;
--
-- cordon_machine: record pending approvals and read them; read leases and remembered
-- rules; spend a once-lease (the columns `used_at_ms` and `uses` only, and only from
-- unspent to spent: see the trigger below); record sessions and their events (append
-- only: a session's history is never deleted or moved to another path, its last use
-- only moves forward; idle sessions are deleted by cordon_expire_sessions, for a machine
-- only once idle for a day), operation ids, MCP pins and shipped decisions.
-- cordon_approver: all of that, and answer pending approvals, write and revoke leases,
-- remember and forget rules, end sessions.
-- Neither may change the schema, create anything in schema public, rewrite a pending
-- approval's request, verdict or machine, or insert one already answered.
--
-- Every function here runs with a fixed search path, and nobody but the owner may create
-- in schema public (PostgreSQL 14 and older let every role do so by default, and a
-- database upgraded from one keeps that): a function or operator planted there could
-- otherwise run with the rights of whoever calls a name it shadows.

SET search_path = public;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'cordon_machine') THEN
        CREATE ROLE cordon_machine NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'cordon_approver') THEN
        CREATE ROLE cordon_approver NOLOGIN;
    END IF;
END
$$;

-- Start from nothing on every table of the store (a re-run narrows what an older run or
-- a hand-made grant gave).
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM PUBLIC, cordon_machine, cordon_approver;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM PUBLIC, cordon_machine, cordon_approver;
-- Only the tables' owner creates in the store's schema (it migrates it).
REVOKE CREATE ON SCHEMA public FROM PUBLIC, cordon_machine, cordon_approver;
DO $$
BEGIN
    EXECUTE pg_catalog.format('GRANT CREATE ON SCHEMA public TO %I',
        (SELECT tableowner FROM pg_catalog.pg_tables
         WHERE schemaname = 'public' AND tablename = 'cordon_schema'));
END
$$;
GRANT USAGE ON SCHEMA public TO cordon_machine, cordon_approver;

-- Machines.
GRANT SELECT ON cordon_schema TO cordon_machine;
GRANT SELECT ON leases, rules TO cordon_machine;
GRANT UPDATE (used_at_ms, uses) ON leases TO cordon_machine;
GRANT SELECT ON pending TO cordon_machine;
GRANT INSERT (fingerprint, session, request, verdict, suggestion, created_ms, operation_id,
              suggestions, machine)
    ON pending TO cordon_machine;
GRANT SELECT, INSERT, DELETE ON operations TO cordon_machine;
GRANT SELECT, UPDATE ON operations_pruned TO cordon_machine;
GRANT SELECT, INSERT ON sessions, session_events TO cordon_machine;
GRANT UPDATE (last_ms, writes, overflowed_ms) ON sessions TO cordon_machine;
GRANT UPDATE (hash, at_ms, tool, call, operation_id) ON session_events TO cordon_machine;
REVOKE ALL ON FUNCTION cordon_expire_sessions(BIGINT) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cordon_expire_sessions(BIGINT) TO cordon_machine;
GRANT SELECT, INSERT, UPDATE, DELETE ON mcp_servers, mcp_tools TO cordon_machine;
GRANT SELECT, INSERT ON decisions TO cordon_machine;
GRANT USAGE ON SEQUENCE pending_id_seq, session_events_seq_seq TO cordon_machine;

-- Approvers: a machine's rights, and the answers.
GRANT cordon_machine TO cordon_approver;
GRANT UPDATE (state, answered_ms, lease_id, edited_input) ON pending TO cordon_approver;
GRANT INSERT, UPDATE, DELETE ON leases TO cordon_approver;
GRANT INSERT, DELETE ON rules TO cordon_approver;
GRANT USAGE ON SEQUENCE leases_id_seq, rules_id_seq TO cordon_approver;
GRANT DELETE ON sessions, session_events TO cordon_approver;

-- Spending is one way: a lease spent stays spent, and `uses` only grows by one per
-- spend, whoever updates it (an UPDATE grant cannot say which values, a trigger can).
CREATE OR REPLACE FUNCTION cordon_lease_spend_only() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF (OLD.used_at_ms IS NOT NULL AND NEW.used_at_ms IS DISTINCT FROM OLD.used_at_ms)
       OR NEW.uses < OLD.uses OR NEW.uses > OLD.uses + 1 THEN
        RAISE EXCEPTION 'a lease can only be spent, never unspent or reset'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION cordon_lease_spend_only() FROM PUBLIC;
DROP TRIGGER IF EXISTS cordon_lease_spend_only ON leases;
CREATE TRIGGER cordon_lease_spend_only BEFORE UPDATE OF used_at_ms, uses ON leases
    FOR EACH ROW EXECUTE FUNCTION cordon_lease_spend_only();

-- A session's history only grows: its last use, its count of writes and its overflow
-- mark never move back (an earlier clock's value is kept, not refused), and an event
-- keeps the session, kind and path it records (the column grants above say so for
-- machines; this says it for everyone who updates).
CREATE OR REPLACE FUNCTION cordon_session_forward_only() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id OR NEW.started_ms IS DISTINCT FROM OLD.started_ms THEN
        RAISE EXCEPTION 'a session keeps its id and start'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    NEW.last_ms := GREATEST(OLD.last_ms, NEW.last_ms);
    NEW.writes := GREATEST(OLD.writes, NEW.writes);
    NEW.overflowed_ms := COALESCE(OLD.overflowed_ms, NEW.overflowed_ms);
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION cordon_session_forward_only() FROM PUBLIC;
DROP TRIGGER IF EXISTS cordon_session_forward_only ON sessions;
CREATE TRIGGER cordon_session_forward_only BEFORE UPDATE ON sessions
    FOR EACH ROW EXECUTE FUNCTION cordon_session_forward_only();

CREATE OR REPLACE FUNCTION cordon_session_event_keep() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.seq IS DISTINCT FROM OLD.seq OR NEW.session IS DISTINCT FROM OLD.session
       OR NEW.kind IS DISTINCT FROM OLD.kind OR NEW.key IS DISTINCT FROM OLD.key
       OR NEW.target IS DISTINCT FROM OLD.target THEN
        RAISE EXCEPTION 'a session event keeps what it records'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION cordon_session_event_keep() FROM PUBLIC;
DROP TRIGGER IF EXISTS cordon_session_event_keep ON session_events;
CREATE TRIGGER cordon_session_event_keep BEFORE UPDATE ON session_events
    FOR EACH ROW EXECUTE FUNCTION cordon_session_event_keep();
