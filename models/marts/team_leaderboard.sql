-- Current rating of every team player, per league and system, ranked, with ordinal = rating - 3 sd.
{{ config(enabled=duckrate._teams_configured()) }}
{{ duckrate.mart('team_leaderboard', ref('team_replays')) }}
