-- The luck-aware grid system (Cowan, games of chance) over the staged matches: one row per match with
-- the posterior predictive forecast made before it; ratings are posterior means on the display scale.
-- Built only when 'chance' is listed in var('duckrate_systems').
{{ config(enabled=('chance' in duckrate._systems())) }}
{{ duckrate.replay('chance', ref('stg_matches')) }}
