-- Current rating of every contest player, per league and system, ranked.
{{ config(enabled=duckrate._contests_configured()) }}
{{ duckrate.mart('contest_leaderboard', ref('contest_replays')) }}
