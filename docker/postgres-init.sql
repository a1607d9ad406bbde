-- Each demo service has a database of its own; the services create their tables (migrations) at startup.
create database post_service;
create database subscribe_service;
-- The redrive CLI's admin database (audit log, used approvals): `messaging db migrate` creates its tables.
create database messaging_admin;
