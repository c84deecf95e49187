-- Calibration of the team systems' forecasts of their two-team matches: log loss, Brier score, accuracy.
{{ config(enabled=duckrate._teams_configured()) }}
{{ duckrate.mart('calibration_summary', ref('team_match_forecasts'), {'min_games': 0, 'warmup': var('duckrate_team_warmup')}) }}
