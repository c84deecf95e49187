{{ config(materialized='duckrate_mart') }}
-- Log loss, Brier score and accuracy of each system's forecasts, overall and among established players.
{{ duckrate.mart_over_replays('calibration_summary', {
    'min_games': var('duckrate_established_min_games'),
    'max_sd': var('duckrate_established_max_sd'),
    'warmup': var('duckrate_warmup')}) }}
