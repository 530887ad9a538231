-- A shipments table over half a year of ALTERs, the way real pipelines drift: a rename and a
-- rename back, two retypes, a drop and a re-add of the same name, and a swap through a
-- temporary name. notebooks/07_debugging_a_table_history.ipynb asks "why is this NULL?" of it.
--
-- The table was created with `destination` before `origin`, and the loader inserts by
-- position in the order origin, destination: from the first day each row's origin went into
-- `destination` and the other way round. In May the two columns swap names instead of the
-- data being rewritten, so rows 1-5 stay stored swapped and read right.
--
-- Expected evolved read (by field id), ORDER BY id:
--   (1, 'A-100', 'DHL', 'Hamburg', 'Lyon',   12.0, 2024-01-05, NULL)
--   (2, 'A-101', 'UPS', 'Porto',   'Turin',   3.0, 2024-01-09, NULL)
--   (3, 'A-102', 'DPD', 'Gdansk',  'Berlin',  0.4, NULL,       NULL)
--   (4, 'B-200', 'GLS', 'Lyon',    'Madrid',  7.5, 2024-03-02, NULL)
--   (5, 'B-201', 'DHL', 'Hamburg', 'Oslo',    2.0, 2024-04-11, 'OK')
--   (6, 'C-300', 'UPS', 'Turin',   'Porto',   1.2, 2024-05-20, 'LATE')
-- columns: id, order_ref, carrier, origin, destination, weight_kg, eta, status
-- Why NULL: `status` of rows 1-4 is field 8, added after their files were written (the
-- old `status`, field 6, was dropped); `eta` of row 3 is 'tbd', which is no DATE
-- (cast.mode = explicit-null reads it as NULL).
CREATE TABLE shipments (
    id INT, order_ref STRING, carrier STRING, destination STRING, origin STRING,
    weight_kg INT, status STRING, eta STRING
) TBLPROPERTIES ('cast.mode' = 'explicit-null');
-- January: the first load (the loader writes origin, destination by position)
INSERT INTO shipments VALUES
    (1, 'A-100', 'DHL', 'Hamburg', 'Lyon', 12, 'delivered', '2024-01-05'),
    (2, 'A-101', 'UPS', 'Porto', 'Turin', 3, 'delivered', '2024-01-09');
-- February: a new naming standard, and parcels lighter than 1 kg
ALTER TABLE shipments RENAME COLUMN carrier TO courier;
ALTER TABLE shipments ALTER COLUMN weight_kg TYPE DOUBLE;
INSERT INTO shipments VALUES (3, 'A-102', 'DPD', 'Gdansk', 'Berlin', 0.4, 'in transit', 'tbd');
-- March: status moves to a shipment_events table; eta becomes a real date
ALTER TABLE shipments DROP COLUMN status;
ALTER TABLE shipments ALTER COLUMN eta TYPE DATE;
INSERT INTO shipments VALUES (4, 'B-200', 'GLS', 'Lyon', 'Madrid', 7.5, DATE '2024-03-02');
-- April: the naming standard is reverted, and a customer-facing status code is added
ALTER TABLE shipments RENAME COLUMN courier TO carrier;
ALTER TABLE shipments ADD COLUMN status STRING;
INSERT INTO shipments VALUES (5, 'B-201', 'DHL', 'Hamburg', 'Oslo', 2.0, DATE '2024-04-11', 'OK');
-- May: origin and destination are swapped through a temporary name
ALTER TABLE shipments RENAME COLUMN destination TO tmp;
ALTER TABLE shipments RENAME COLUMN origin TO destination;
ALTER TABLE shipments RENAME COLUMN tmp TO origin;
INSERT INTO shipments VALUES (6, 'C-300', 'UPS', 'Turin', 'Porto', 1.2, DATE '2024-05-20', 'LATE');
SELECT * FROM shipments ORDER BY id;
