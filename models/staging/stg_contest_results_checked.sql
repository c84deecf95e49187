-- Every raw contest row with the reason it cannot be replayed (NULL when it can). Feeds stg_contest_results
-- and rejected_contest_results. Built only when a contest table is configured (var duckrate_contests_*).
{{ config(enabled=duckrate._contests_configured()) }}
{% if duckrate._contests_configured() %}{{ duckrate._checked_contests(duckrate._raw_contests()) }}{% endif %}
