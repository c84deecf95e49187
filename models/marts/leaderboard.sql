-- Current rating of every player, per league and system, ranked.
{{ duckrate.mart('leaderboard', ref('replays')) }}
