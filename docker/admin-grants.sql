-- Guide 08's grants ("Permissions, the admin database"), run as messaging_admin_owner after `db migrate`: the
-- console and the CLI (messaging_redrive) read and append the audit log and the used approvals, read the chain's
-- head and the pinned keyring and topology, and read, add and step the console's plans (no DELETE).
grant usage on schema messaging_admin to messaging_redrive;
grant select, insert on messaging_admin.messaging_redrive_audit, messaging_admin.messaging_redrive_nonce
  to messaging_redrive;
grant select on messaging_admin.messaging_redrive_audit_head, messaging_admin.messaging_redrive_keyring,
  messaging_admin.messaging_redrive_topology to messaging_redrive;
grant select, insert on messaging_admin.messaging_console_plan to messaging_redrive;
grant update (approval, result, executed_at, stale_at, refusals) on messaging_admin.messaging_console_plan
  to messaging_redrive;
