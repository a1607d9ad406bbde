-- Each demo service has a database of its own; the services create their tables (migrations) at startup.
create database post_service;
create database subscribe_service;
-- The redrive CLI's admin database (audit log, used approvals): `messaging db migrate` creates its tables.
create database messaging_admin;
-- Its roles, as guide 08 gives them ("Permissions, the admin database"): an owner that runs the migrations and
-- grants (the admin-db and admin-grants jobs), and the everyday role of the console and the CLI, which can read
-- and append the audit log but not rewrite it. Local passwords: the demo's, never production's.
create role messaging_admin_owner login password 'local-admin-owner';
create role messaging_redrive login password 'local-redrive';
\connect messaging_admin
create schema messaging_admin authorization messaging_admin_owner;
