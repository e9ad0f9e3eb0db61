-- schema.sql: tables, a view and a PL/pgSQL function.
-- Comments may hold brackets: ( [ {

CREATE TABLE customers (
    id          SERIAL PRIMARY KEY,
    name        TEXT NOT NULL CHECK (length(name) > 0),
    email       TEXT UNIQUE,
    note        TEXT DEFAULT 'it''s new (unverified',
    "weird)col" INTEGER
);

CREATE TABLE orders (
    id          SERIAL PRIMARY KEY,
    customer_id INTEGER REFERENCES customers (id),
    total_cents BIGINT NOT NULL DEFAULT 0,
    tags        TEXT[] DEFAULT ARRAY['a]', 'b'],
    created_at  TIMESTAMPTZ DEFAULT now()
);

/* Block comment with an unmatched ) and
   a second line with { */
CREATE VIEW big_spenders AS
SELECT c.name, SUM(o.total_cents) / 100.0 AS total
FROM customers c
JOIN orders o ON (o.customer_id = c.id)
GROUP BY c.name
HAVING SUM(o.total_cents) > (SELECT AVG(total_cents) FROM orders;

CREATE OR REPLACE FUNCTION order_count(cid INTEGER) RETURNS INTEGER AS $$
BEGIN
    -- body is opaque: ( is not checked here
    RETURN (SELECT COUNT(*) FROM orders WHERE customer_id = cid;
END;
$$ LANGUAGE plpgsql;

INSERT INTO customers (name, email) VALUES ('Ann (VIP)', 'ann@example.com');
