-- FLIP-226's own example: drop a column, add it back, and read both files.
-- Expected: ('a1', 'b1', NULL), ('a2', 'b2', 'c2') -- the old 'c1' belongs to a dropped field.
CREATE TABLE T (a STRING, b STRING, c STRING);
INSERT INTO T VALUES ('a1', 'b1', 'c1');
ALTER TABLE T DROP COLUMN c;
ALTER TABLE T ADD COLUMN c STRING;
INSERT INTO T VALUES ('a2', 'b2', 'c2');
SELECT * FROM T ORDER BY a;
