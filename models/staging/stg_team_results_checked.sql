-- Every raw team results row with the reason it cannot be replayed (NULL when it can). Feeds stg_team_results
-- and rejected_team_results. Built only when a team results table is configured (var duckrate_teams_*).
{{ config(enabled=duckrate._teams_configured()) }}
{% if duckrate._teams_configured() %}{{ duckrate._checked_teams(duckrate._raw_teams()) }}{% endif %}
