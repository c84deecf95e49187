{{ config(materialized='duckrate_mart') }}
-- Reliability of each system's forecasts: mean forecast against mean result per forecast bin.
{{ duckrate.mart_over_replays('calibration_bins', {'bins': var('duckrate_calibration_bins')}) }}
