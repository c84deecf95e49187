-- The two-team matches of every team replay as two-player replay rows (team A, whose key sorts first, against
-- team B): the input of team_calibration_summary, and of any two-player mart a user points at it.
{{ config(enabled=duckrate._teams_configured()) }}
{{ duckrate.mart('team_match_forecasts', ref('team_replays')) }}
