-- Elo replay over the staged matches: one row per match with the forecast made before it.
{{ duckrate.replay('elo', ref('stg_matches')) }}
