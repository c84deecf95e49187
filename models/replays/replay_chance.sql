-- The luck-aware grid system (Cowan, games of chance) over the staged matches: one row per match with
-- the posterior predictive forecast made before it; ratings are posterior means on the display scale.
-- Incremental: continues from replay_chance__state when new matches arrive (see macros/materializations).
-- Built only when 'chance' is listed in var('duckrate_systems').
{{ config(enabled=('chance' in duckrate._systems()), materialized='duckrate_replay', duckrate_system='chance') }}
{{ duckrate._replay_input(ref('stg_matches')) }}
