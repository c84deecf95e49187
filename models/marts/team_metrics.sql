-- How well each team system forecast its matches, per league: the winner's log loss, the accuracy of the
-- predicted winner, and the pair inversion and rank deviation of the predicted places (docs/teams.md).
{{ config(enabled=duckrate._teams_configured()) }}
{{ duckrate.mart('team_metrics', ref('team_replays'), {'warmup': var('duckrate_team_warmup')}) }}
