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
-- unspent to spent: see the trigger below); sessions and their writes, operation ids,
-- MCP pins and shipped decisions.
-- cordon_approver: all of that, and answer pending approvals, write and revoke leases,
-- remember and forget rules.
-- Neither may change the schema, rewrite a pending approval's request, verdict or
-- machine, or insert one already answered.

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
GRANT SELECT, INSERT, UPDATE, DELETE ON sessions, session_events TO cordon_machine;
GRANT SELECT, INSERT, UPDATE, DELETE ON mcp_servers, mcp_tools TO cordon_machine;
GRANT SELECT, INSERT ON decisions TO cordon_machine;
GRANT USAGE ON SEQUENCE pending_id_seq, session_events_seq_seq TO cordon_machine;

-- Approvers: a machine's rights, and the answers.
GRANT cordon_machine TO cordon_approver;
GRANT UPDATE (state, answered_ms, lease_id, edited_input) ON pending TO cordon_approver;
GRANT INSERT, UPDATE, DELETE ON leases TO cordon_approver;
GRANT INSERT, DELETE ON rules TO cordon_approver;
GRANT USAGE ON SEQUENCE leases_id_seq, rules_id_seq TO cordon_approver;

-- Spending is one way: a lease spent stays spent, and `uses` only grows by one per
-- spend, whoever updates it (an UPDATE grant cannot say which values, a trigger can).
CREATE OR REPLACE FUNCTION cordon_lease_spend_only() RETURNS trigger
LANGUAGE plpgsql AS $$
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
