-- The event trigger that refuses ALTER TABLE ... DISABLE TRIGGER (one, USER or ALL) and ENABLE REPLICA TRIGGER on
-- the triggers that keep Factdesk's history append-only (docs/history.md). Only a superuser can create an event
-- trigger. Migration audit 0013 runs this file when the migrating role is one; otherwise a superuser runs it once,
-- as it is, in the app's database, and again after every restore (docs/operations.md, "Restoring a backup"):
--
--     psql -U postgres -d factdesk -v ON_ERROR_STOP=1 -1 -f deploy/history_event_trigger.sql
--
-- Running it again is harmless. `manage.py check_history` then reports the event trigger as present, refusing, and
-- out of the app's reach.
--
-- Out of the app's reach: the function lives in a schema of its own, factdesk_guard, owned by whoever runs this (the
-- superuser), and is made anew here. A function the app's role owns (a restore with --no-owner leaves it so) can be
-- replaced by that role with one that refuses nothing; one in a schema it owns (public) can be dropped by it with
-- CASCADE, the event trigger with it. So the schema is dropped and made again, whoever made it before.

DROP EVENT TRIGGER IF EXISTS factdesk_history_triggers_stay_enabled;
DROP FUNCTION IF EXISTS public.factdesk_refuse_disabled_history_triggers();  -- where releases before this one put it
DROP SCHEMA IF EXISTS factdesk_guard CASCADE;
CREATE SCHEMA factdesk_guard;

CREATE FUNCTION factdesk_guard.factdesk_refuse_disabled_history_triggers() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
    hit record;
BEGIN
    -- After the ALTER TABLE: is any pgtrigger trigger of the altered tables (or of their partitions) no longer
    -- fired in an ordinary session? D = disabled, R = fired only under session_replication_role = replica.
    SELECT t.tgname, t.tgrelid::regclass AS tbl INTO hit
    FROM pg_event_trigger_ddl_commands() AS c
    CROSS JOIN LATERAL (SELECT c.objid::regclass UNION SELECT relid FROM pg_partition_tree(c.objid::regclass))
        AS tree (relid)
    JOIN pg_trigger AS t ON t.tgrelid = tree.relid
    WHERE c.object_type = 'table' AND starts_with(t.tgname, 'pgtrigger_') AND t.tgenabled IN ('D', 'R')
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'Cannot disable trigger % on %: the triggers that keep history stay enabled', hit.tgname, hit.tbl
            USING HINT = 'See docs/history.md.';
    END IF;
END;
$$;

CREATE EVENT TRIGGER factdesk_history_triggers_stay_enabled ON ddl_command_end WHEN TAG IN ('ALTER TABLE')
    EXECUTE FUNCTION factdesk_guard.factdesk_refuse_disabled_history_triggers();
