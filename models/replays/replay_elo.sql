-- Elo replay over the staged matches: one row per match with the forecast made before it.
-- Built only when 'elo' is listed in var('duckrate_systems').
{{ config(enabled=('elo' in duckrate._systems())) }}
{{ duckrate.replay('elo', ref('stg_matches')) }}
