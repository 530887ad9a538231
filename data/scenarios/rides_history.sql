-- A year of a ride-hailing `trips` table: 50 schema versions (CREATE and 49 ALTERs), 111
-- fields over its life (92 at creation, nested ones included) and 5 INSERTs (snapshots). It is
-- the "real scale" history the explorer is tested on: tests/test_widgets.py counts the lineage
-- figure's labels on it, tests/browser/ opens it in the Explorer, bench/ times its figures.
--
-- What happens to the fields, by schema id:
--   2, 22, 25  rider_rating -> rider_score; payment_method -> pay_method -> payment_method
--   9, 28      nested renames inside the `pickup` ROW (lat -> latitude, lon -> longitude)
--   10         amount -> amount_cents (an ALTER naming `amount` after this fails, and says so)
--   15-17      start_zone and end_zone swap names through a temporary name
--   18-19      device.carrier dropped, then re-added: a new field with an old name
--   20-21      promo_code dropped and re-added the same way
--   4, 11, 23  retypes (INT -> BIGINT, FLOAT -> DOUBLE); 13, 42 nullability (NOT NULL dropped); 6, 27, 44 comments
--   14, 34     moves (AFTER, FIRST); 8 changes only a table option (no field changes)
--   37-38, 46  driver_rating renamed away, a new driver_rating added, the old one dropped

CREATE TABLE trips (
    trip_id BIGINT NOT NULL,
    requested_at TIMESTAMP,
    rider_id BIGINT NOT NULL,
    driver_id BIGINT NOT NULL,
    city STRING,
    status STRING,
    amount INT,
    currency STRING,
    distance_km FLOAT,
    duration_s INT,
    surge DOUBLE,
    start_zone STRING,
    end_zone STRING,
    device ROW<os STRING, model STRING, app_version STRING, carrier STRING, locale STRING>,
    pickup ROW<lat DOUBLE, lon DOUBLE, zone STRING, address STRING>,
    rider_rating FLOAT,
    rider_trips_total INT,
    rider_signup_day DATE,
    rider_segment STRING,
    rider_language STRING,
    rider_is_business BOOLEAN,
    rider_referrer STRING,
    rider_tier STRING,
    driver_rating FLOAT,
    driver_trips_total INT,
    driver_since_day DATE,
    driver_shift STRING,
    driver_home_zone STRING,
    driver_acceptance DOUBLE,
    driver_cancel_rate DOUBLE,
    driver_badge STRING,
    vehicle_type STRING,
    vehicle_plate STRING,
    vehicle_seats INT,
    vehicle_make STRING,
    vehicle_model STRING,
    vehicle_year INT,
    vehicle_fuel STRING,
    vehicle_color STRING,
    payment_method STRING,
    payment_card_brand STRING,
    payment_wallet STRING,
    payment_tax INT,
    payment_fees INT,
    payment_tolls INT,
    payment_refund INT,
    payment_invoice_ref STRING,
    route_waypoints INT,
    route_detour_km FLOAT,
    route_highway_km FLOAT,
    route_traffic STRING,
    route_planned_s INT,
    route_idle_s INT,
    route_polyline STRING,
    route_provider STRING,
    app_session_id STRING,
    app_screen STRING,
    app_ab_group STRING,
    app_push_opt_in BOOLEAN,
    app_build INT,
    app_crash_count INT,
    app_latency_ms INT,
    app_ip_country STRING,
    support_ticket STRING,
    support_category STRING,
    support_csat INT,
    support_agent STRING,
    support_opened_at TIMESTAMP,
    support_closed_at TIMESTAMP,
    support_priority INT,
    support_notes STRING,
    eta_quoted_s INT,
    eta_actual_s INT,
    eta_model_version STRING,
    eta_error_s INT,
    eta_pickup_quoted_s INT,
    eta_pickup_actual_s INT,
    eta_confidence DOUBLE,
    eta_source STRING,
    weather_temp_c FLOAT,
    weather_rain_mm FLOAT,
    weather_wind_kmh FLOAT,
    weather_condition STRING
);
INSERT INTO trips (trip_id, requested_at, rider_id, driver_id, city, status, amount, currency, start_zone, end_zone, device) VALUES
    (1, TIMESTAMP '2024-01-03 08:10:00', 501, 77, 'LIS', 'done', 1250, 'EUR', 'Alfama', 'Belem', named_struct('os', 'ios', 'model', 'iPhone 13', 'app_version', '4.1', 'carrier', 'MEO', 'locale', 'pt-PT')),
    (2, TIMESTAMP '2024-01-03 09:45:00', 502, 78, 'OPO', 'done', 830, 'EUR', 'Ribeira', 'Boavista', named_struct('os', 'android', 'model', 'Pixel 7', 'app_version', '4.1', 'carrier', 'NOS', 'locale', 'pt-PT'));
-- February: tips go live
ALTER TABLE trips ADD COLUMN tip INT;  -- schema 1
ALTER TABLE trips RENAME COLUMN rider_rating TO rider_score;  -- schema 2
ALTER TABLE trips ADD COLUMNS (dropoff_zone STRING, dropoff_eta TIMESTAMP);  -- schema 3
ALTER TABLE trips ALTER COLUMN duration_s TYPE BIGINT;  -- schema 4
-- the app starts reporting its OS version
ALTER TABLE trips ADD COLUMN device.os_version STRING;  -- schema 5
ALTER TABLE trips ALTER COLUMN city COMMENT 'three-letter city code';  -- schema 6
-- support moves to its own table
ALTER TABLE trips DROP COLUMN support_ticket;  -- schema 7
ALTER TABLE trips SET TBLPROPERTIES ('snapshot.num-retained.min' = '20');  -- schema 8
ALTER TABLE trips RENAME COLUMN pickup.lat TO latitude;  -- schema 9
-- amounts are cents: say so
ALTER TABLE trips RENAME COLUMN amount TO amount_cents;  -- schema 10
ALTER TABLE trips ALTER COLUMN distance_km TYPE DOUBLE;  -- schema 11
ALTER TABLE trips ADD COLUMN promo_code STRING;  -- schema 12
INSERT INTO trips (trip_id, rider_id, driver_id, city, status, amount_cents, currency, tip, promo_code) VALUES
    (3, 503, 79, 'LIS', 'done', 1990, 'EUR', 200, 'WELCOME'),
    (4, 504, 77, 'MAD', 'cancelled', 0, 'EUR', NULL, NULL);
ALTER TABLE trips ALTER COLUMN rider_id DROP NOT NULL;  -- schema 13
ALTER TABLE trips ALTER COLUMN status AFTER trip_id;  -- schema 14
-- start and end zones were loaded swapped: swap the names, not the data
ALTER TABLE trips RENAME COLUMN start_zone TO zone_tmp;  -- schema 15
ALTER TABLE trips RENAME COLUMN end_zone TO start_zone;  -- schema 16
ALTER TABLE trips RENAME COLUMN zone_tmp TO end_zone;  -- schema 17
ALTER TABLE trips DROP COLUMN device.carrier;  -- schema 18
-- the carrier comes back, from a new source
ALTER TABLE trips ADD COLUMN device.carrier STRING;  -- schema 19
ALTER TABLE trips DROP COLUMN promo_code;  -- schema 20
-- promo codes return, as a different field
ALTER TABLE trips ADD COLUMN promo_code STRING;  -- schema 21
ALTER TABLE trips RENAME COLUMN payment_method TO pay_method;  -- schema 22
ALTER TABLE trips ALTER COLUMN tip TYPE BIGINT;  -- schema 23
-- sustainability report
ALTER TABLE trips ADD COLUMNS (co2_g INT, is_electric BOOLEAN);  -- schema 24
-- the naming standard is reverted
ALTER TABLE trips RENAME COLUMN pay_method TO payment_method;  -- schema 25
INSERT INTO trips (trip_id, rider_id, driver_id, city, status, amount_cents, currency, start_zone, end_zone, promo_code, co2_g, is_electric) VALUES
    (5, 505, 80, 'LIS', 'done', 2410, 'EUR', 'Parque', 'Airport', 'SPRING', 812, true);
ALTER TABLE trips ALTER COLUMN vehicle_seats TYPE BIGINT;  -- schema 26
ALTER TABLE trips ALTER COLUMN pickup.lon COMMENT 'WGS84';  -- schema 27
ALTER TABLE trips RENAME COLUMN pickup.lon TO longitude;  -- schema 28
ALTER TABLE trips DROP COLUMN weather_wind_kmh;  -- schema 29
ALTER TABLE trips ADD COLUMN device.battery_pct INT;  -- schema 30
-- payments team cleanup
ALTER TABLE trips DROP COLUMN payment_wallet;  -- schema 31
ALTER TABLE trips RENAME COLUMN payment_card_brand TO card_network;  -- schema 32
ALTER TABLE trips ALTER COLUMN co2_g TYPE BIGINT;  -- schema 33
ALTER TABLE trips ALTER COLUMN surge FIRST;  -- schema 34
ALTER TABLE trips ADD COLUMN rider_pronouns STRING;  -- schema 35
ALTER TABLE trips ALTER COLUMN eta_error_s TYPE BIGINT;  -- schema 36
-- the driver rating model changes
ALTER TABLE trips RENAME COLUMN driver_rating TO driver_rating_v1;  -- schema 37
ALTER TABLE trips ADD COLUMN driver_rating DOUBLE;  -- schema 38
ALTER TABLE trips ALTER COLUMN route_detour_km TYPE DOUBLE;  -- schema 39
ALTER TABLE trips DROP COLUMN app_crash_count;  -- schema 40
ALTER TABLE trips ADD COLUMNS (app_os_dark_mode BOOLEAN, app_font_scale FLOAT);  -- schema 41
INSERT INTO trips (trip_id, rider_id, driver_id, city, status, amount_cents, currency, driver_rating) VALUES
    (6, 506, 81, 'BCN', 'done', 1575, 'EUR', 4.92),
    (7, 501, 82, 'LIS', 'done', 990, 'EUR', 4.71);
ALTER TABLE trips ALTER COLUMN driver_id DROP NOT NULL;  -- schema 42
ALTER TABLE trips RENAME COLUMN device.locale TO language_tag;  -- schema 43
ALTER TABLE trips ALTER COLUMN currency COMMENT 'ISO 4217';  -- schema 44
-- airport pickups
ALTER TABLE trips ADD COLUMNS (airport_code STRING, terminal STRING);  -- schema 45
ALTER TABLE trips DROP COLUMN driver_rating_v1;  -- schema 46
ALTER TABLE trips ALTER COLUMN app_font_scale TYPE DOUBLE;  -- schema 47
ALTER TABLE trips RENAME COLUMN weather_condition TO weather;  -- schema 48
-- year end: the fare is split into its parts
ALTER TABLE trips ADD COLUMNS (fare_base_cents BIGINT, fare_time_cents BIGINT, fare_distance_cents BIGINT);  -- schema 49
INSERT INTO trips (trip_id, rider_id, driver_id, city, status, amount_cents, currency, airport_code, fare_base_cents, fare_time_cents, fare_distance_cents) VALUES
    (8, 507, 83, 'LIS', 'done', 3120, 'EUR', 'LIS', 1000, 820, 1300);
