-- A swap through a temporary name. The first load put each city's longitude into `lat` and
-- its latitude into `lon`; instead of rewriting the data, the two columns swap names.
-- Expected (by field id): (1, 'Berlin', 52.52, 13.40), (2, 'Paris', 48.86, 2.35).
-- A reader that matches file columns by name gets Berlin wrong: (1, 'Berlin', 13.40, 52.52).
CREATE TABLE cities (id INT, city STRING, lat DOUBLE, lon DOUBLE);
INSERT INTO cities VALUES (1, 'Berlin', 13.40, 52.52);
ALTER TABLE cities RENAME COLUMN lat TO tmp;
ALTER TABLE cities RENAME COLUMN lon TO lat;
ALTER TABLE cities RENAME COLUMN tmp TO lon;
INSERT INTO cities VALUES (2, 'Paris', 48.86, 2.35);
SELECT * FROM cities ORDER BY id;
