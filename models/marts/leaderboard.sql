{{ config(materialized='duckrate_mart') }}
-- Current rating of every player, per league and system, ranked.
{{ duckrate.mart_over_replays('leaderboard') }}
