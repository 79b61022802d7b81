-- The studio's PostgreSQL: one database, one owner role for the services (migrations run at start).
-- psql -v password="'…'" -f deploy/postgres/setup.sql   (as a superuser)
CREATE ROLE studio LOGIN PASSWORD :password;
CREATE DATABASE studio OWNER studio;
\connect studio
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT ALL ON SCHEMA public TO studio;
-- The ledger's transfers are append-only: the migrations install triggers that refuse UPDATE and DELETE.
-- STUDIO_DATABASE_URL=postgresql://studio:…@db-host:5432/studio
